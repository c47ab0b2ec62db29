"""Class report: a letter grade for each exam score, and how many of each. It has a bug to find.

Run it with ``python grades.py``: it crashes on one student.
"""

SCORES = {"ada": 93, "bo": 78, "cy": 64, "dee": 100, "eve": 81, "fay": 47}
LETTERS = "FFFFFFDCBA"  # by score // 10: 0-59 F, 60-69 D, 70-79 C, 80-89 B, 90-99 A


def letter(score):
    return LETTERS[score // 10]


def report(scores):
    counts = {}
    for student, score in scores.items():
        grade = letter(score)
        counts[grade] = counts.get(grade, 0) + 1
        print(f"{student:<4} {score:>3}  {grade}")
    return counts


def main():
    counts = report(SCORES)
    print("grades:", ", ".join(f"{grade} {counts[grade]}" for grade in sorted(counts)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
