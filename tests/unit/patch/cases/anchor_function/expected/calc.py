def first(x):
    y = x + 1
    return y


def second(x):
    y = x + 2
    return y
