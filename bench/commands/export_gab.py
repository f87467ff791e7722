"""(not yet built) export_gab"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench export_gab: not built yet")
