"""(not yet built) matrix"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench matrix: not built yet")
