"""Tests of ``shipping.py``, the example debugged with ``%debug_session launch -m pytest``; one of them fails."""

from shipping import order_total


def test_small_order_pays_standard_shipping():
    assert order_total([(12.50, 2)]) == 29.90


def test_express_is_never_free():
    assert order_total([(80.00, 1)], "express") == 89.90


def test_standard_shipping_is_free_from_fifty_euros():
    assert order_total([(20.00, 2), (10.00, 1)]) == 50.00
