"""Warehouse restock plan: how many units of each part to order before it runs out. It has a bug to find.

Run it with ``python restock.py``: it stops with a ZeroDivisionError on one part.
"""

STOCK = {"bolts": 120, "nuts": 40, "washers": 0, "screws": 75, "rivets": 8, "hinges": 30}
DAILY_USE = {"bolts": 30, "nuts": 25, "washers": 10, "screws": 0, "rivets": 4, "hinges": 2}
LEAD_DAYS = 5  # days between an order and its delivery


def days_left(part):
    return STOCK[part] / DAILY_USE[part]


def reorder_quantity(part):
    if days_left(part) >= LEAD_DAYS:
        return 0
    return DAILY_USE[part] * LEAD_DAYS * 2 - STOCK[part]


def plan():
    order = {}
    for part in STOCK:
        order[part] = reorder_quantity(part)
    return order


def main():
    for part, quantity in plan().items():
        if quantity:
            print(f"order {quantity:>3} {part}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
