"""`enzyme-build package`: a differentiable shared library, its C header and a Python package."""
from __future__ import annotations

import sys

import click


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": True,
                                 "help_option_names": ["-h", "--help"]})
@click.argument("arguments", nargs=-1, type=click.UNPROCESSED)
@click.option("--name", required=True, help="the Python module name (also lib<NAME>.so, <NAME>.h)")
@click.option("-o", "output", required=True, metavar="DIR", help="the package directory to create")
@click.option("--export", "exports", multiple=True, metavar="SPEC",
              help="a function and its parameters, e.g. 'energy(x[n], n, k)'; repeat for more")
@click.option("--no-jax", is_flag=True,
              help="do not build the JAX FFI handlers")
def package(arguments, name, output, exports, no_jax):
    """Build DIR: an installable Python package around functions of SRC….

    \b
    enzyme-build package SRC… [-O2 -I… -D… -L… -l…] --name NAME -o DIR \\
        --export 'energy(x[n], n, k)' --export 'residual(p[n], n, r[n])'

    A pointer parameter gets its length (x[n], A[m*n]); const pointers are inputs, other
    pointers outputs ('inout:' before the name for in-out); integers that are an input
    array's length are inferred. See docs/packaging.md.
    """
    from ..package.builder import PackageRequest, build_package
    request = PackageRequest(tuple(arguments), name, output, tuple(exports), jax=not no_jax)
    bindings = build_package(request, log=lambda note: click.echo(f"enzyme-build: {note}", err=True))
    functions = ", ".join(b.function for b in bindings)
    click.echo(f"{output}: package {name} ({functions}); pip install {output}, or put "
               f"{output} on sys.path and import {name}", err=True)
    sys.exit(0)
