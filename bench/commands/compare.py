"""(not yet built) compare"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench compare: not built yet")
