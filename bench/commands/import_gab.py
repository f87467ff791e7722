"""(not yet built) import_gab"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench import_gab: not built yet")
