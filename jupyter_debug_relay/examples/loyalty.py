"""Loyalty points: one point per euro spent, double points for orders placed at the weekend. It has a bug to find.

Run it with ``python loyalty.py``: it prints the points of each order and the total.
"""

ORDERS = [("mon", 20.0), ("sat", 35.0), ("sun", 10.0), ("tue", 15.0), ("wed", 8.0)]
WEEKEND = ("sat", "sun")


def points_for(orders):
    points = []
    multiplier = 1
    for day, amount in orders:
        if day in WEEKEND:
            multiplier = 2
        points.append((day, int(amount * multiplier)))
    return points


def main():
    points = points_for(ORDERS)
    for day, earned in points:
        print(f"{day}  {earned:>3} points")
    print("total", sum(earned for _, earned in points))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
