"""(not yet built) report"""


def add_arguments(parser):
    pass


def main(args):
    raise SystemExit("bench report: not built yet")
