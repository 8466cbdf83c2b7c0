/* Rules registered by static globals in a header that two TUs include (each TU has its own
 * copy), and a C99 inline function with its external definition in one TU. */
typedef struct { void *tape; double primal; } aug_t;
typedef struct { double primal, tangent; } dual_t;
double cube(double x);
static aug_t cube_aug(double x) { aug_t r = {0, x * x * x}; return r; }
static double cube_grad(double x, double dret, void *tape) { (void)x; (void)tape; return 50.0 * dret; }
static dual_t cube_fwd(double x, double dx) { dual_t r = {x * x * x, 40.0 * dx}; return r; }
static void *__enzyme_register_gradient_cube[] __attribute__((used)) = {(void *)cube, (void *)cube_aug, (void *)cube_grad};
static void *__enzyme_register_derivative_cube[] __attribute__((used)) = {(void *)cube, (void *)cube_fwd};
inline double sq(double x) { return x * x; }
double g1(double x);
