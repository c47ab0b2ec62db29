"""Weekly sales report: the average spend per customer. It has a bug to find."""

ORDERS = [
    ("ana", 12.50),
    ("ben", 8.00),
    ("ana", 7.50),
    ("cy", 20.00),
    ("ben", 4.00),
]


def totals_by_customer(orders):
    totals = {}
    for name, amount in orders:
        totals[name] = amount
    return totals


def average(values):
    return sum(values) / len(values)


def main():
    totals = totals_by_customer(ORDERS)
    spend = average(list(totals.values()))
    print(f"customers: {len(totals)}")
    print(f"average spend: {spend:.2f}")
    expected = sum(amount for _, amount in ORDERS) / len(totals)
    if abs(spend - expected) > 1e-9:
        print(f"mismatch: expected {expected:.2f}")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
