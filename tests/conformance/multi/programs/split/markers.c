/* The ABI markers, defined by the program itself (other TUs declare them extern). */
int enzyme_dup = 0, enzyme_const = 0, enzyme_width = 0;
