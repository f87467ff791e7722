"""(not yet built) serve"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench serve: not built yet")
