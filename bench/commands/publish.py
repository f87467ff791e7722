"""(not yet built) publish"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench publish: not built yet")
