"""You return the weighted sum itself; the mean divides it by the total weight."""


def average(acc):
    return acc["sum"]
