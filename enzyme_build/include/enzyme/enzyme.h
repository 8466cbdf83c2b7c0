/* enzyme/enzyme.h: the C ABI of enzyme-build's automatic differentiation (C and C++).
 *
 * Calls to __enzyme_autodiff / __enzyme_fwddiff / __enzyme_augmentfwd / __enzyme_reverse
 * are replaced at link time by synthesized derivatives (build with enzyme-build).
 * Activity markers precede arguments: enzyme_dup (value, shadow), enzyme_dupnoneed,
 * enzyme_out (active scalar, reverse mode), enzyme_const (inactive).
 */
#ifndef ENZYME_ENZYME_H
#define ENZYME_ENZYME_H

#ifdef __cplusplus
extern "C" {
#endif

/* Activity markers: pass them by value, e.g. enzyme_dup, x, dx. */
extern int enzyme_dup;
extern int enzyme_dupnoneed;
extern int enzyme_out;
extern int enzyme_const;
extern int enzyme_width;
extern int enzyme_allocated;
extern int enzyme_tape;
/* Split mode: put before (or right after) an argument's activity marker to promise that the
 * memory it points to is not changed between __enzyme_augmentfwd and __enzyme_reverse; the
 * tape then need not hold the values read from it. Both calls must carry the same markers. */
extern int enzyme_not_overwritten;
extern int enzyme_nocache;   /* Enzyme's newer spelling of the same promise */

/* Reverse mode: returns the adjoints of active scalar arguments; accumulates (+=) into
 * the shadows of enzyme_dup arguments. The return type depends on the call site: declare
 * your own prototype (any name containing __enzyme_autodiff) for other return types. */
double __enzyme_autodiff(void *, ...);
/* Forward mode: returns the tangent of the return value. */
double __enzyme_fwddiff(void *, ...);
/* Split reverse mode: the augmented forward pass returns a tape for __enzyme_reverse. */
void *__enzyme_augmentfwd(void *, ...);
/* Split reverse mode: same arguments, then the return adjoint (if any), then the tape. */
void __enzyme_reverse(void *, ...);
/* Size in bytes of the tape __enzyme_augmentfwd would allocate. */
unsigned long __enzyme_augmentsize(void *, ...);

/* Shadow contexts: a context holds its own shadow of every global (width lanes).
 *   void *ctx = __enzyme_context(1);
 *   double *dg = (double *)__enzyme_shadow(ctx, &g, 0);   -- g's shadow in ctx, lane 0
 *   __enzyme_autodiff((void *)f, enzyme_context, ctx, x);   -- *dg += d f / d g
 *   __enzyme_zero_shadows(ctx);                             -- every shadow of ctx back to 0
 * A context must be made in the function that uses it. Without a context, a top-level call
 * leaves no adjoints in globals; __enzyme_shadow(&g, 1, 0) names g's one shared shadow. */
extern int enzyme_context;
void *__enzyme_context(int width);
void *__enzyme_shadow(void *, ...);
void __enzyme_zero_shadows(void *ctx);

#ifdef __cplusplus
}
#endif

/* Registration helpers (ARCHITECTURE §5). Each defines a global the link step reads, so
 * write each one once, in one source file (not in a header included by several).
 *
 *   ENZYME_REGISTER_GRADIENT(f, f_aug, f_grad)   custom reverse-mode derivative of f
 *   ENZYME_REGISTER_DERIVATIVE(f, f_fwd)         custom forward-mode derivative of f
 *   ENZYME_INACTIVE(f)                           f never carries derivatives
 *   ENZYME_FUNCTION_LIKE(f, "log1p")             differentiate f as the named libm function
 */
#ifdef __cplusplus
#define ENZYME_EXTERN_C_ extern "C"
#else
#define ENZYME_EXTERN_C_
#endif

#define ENZYME_REGISTER_GRADIENT(f, aug, grad) \
  ENZYME_EXTERN_C_ void *__enzyme_register_gradient_##f[3] = { \
      (void *)(f), (void *)(aug), (void *)(grad)}
#define ENZYME_REGISTER_DERIVATIVE(f, fwd) \
  ENZYME_EXTERN_C_ void *__enzyme_register_derivative_##f[2] = { \
      (void *)(f), (void *)(fwd)}
#define ENZYME_INACTIVE(f) \
  ENZYME_EXTERN_C_ void *__enzyme_inactivefn_##f[1] = {(void *)(f)}
#define ENZYME_FUNCTION_LIKE(f, name) \
  ENZYME_EXTERN_C_ void *__enzyme_function_like_##f[2] = { \
      (void *)(f), (void *)(name)}

#endif /* ENZYME_ENZYME_H */
