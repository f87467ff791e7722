"""(not yet built) site"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench site: not built yet")
