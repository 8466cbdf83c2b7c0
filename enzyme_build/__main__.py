"""`python -m enzyme_build …` is `enzyme-build …`."""
from .cli.main import main

main()
