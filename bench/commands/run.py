"""(not yet built) run"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench run: not built yet")
