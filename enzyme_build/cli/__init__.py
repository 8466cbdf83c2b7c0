"""Command-line entry points: `enzyme-build` and its subcommands, `enzyme-cc`, `enzyme-c++`."""
