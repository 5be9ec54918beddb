"""Print a greeting for each name given on the command line."""

import sys


def greet(name):
    # TODO: say goodbye too
    return "Hello, " + name + "!"


def main(argv):
    for name in argv[1:] or ["world"]:
        print(greet(name))


if __name__ == "__main__":
    main(sys.argv)
