"""The compiler front end: clang argument model, fat-object compiles, the cc driver."""
