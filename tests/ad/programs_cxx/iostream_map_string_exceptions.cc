#include <iostream>
#include <map>
#include <string>
#include <stdexcept>
#include <cstdio>
#include <cstdlib>
#include <ctime>
extern "C" double __enzyme_autodiff(void*, ...);
static std::map<std::string, double> coef = {{"alpha", 1.5}, {"beta", 0.5}};
double g(double x) {
  std::cout << "step " << 3 << " label " << std::string("x") << " value " << x << '\n';
  if (std::string("alpha").compare("alpha") != 0) throw std::runtime_error("bad");
  double a = coef.at("alpha"), b = coef["beta"];
  try { if (x < -100) throw std::out_of_range("x"); } catch (const std::exception &e) { std::cerr << e.what(); }
  int r = std::rand() % 3; (void)r; std::time(nullptr);
  return a * x * x * x + b * x;   // 4.5 x^2 + 0.5 at 2 = 18.5
}
int main() { std::printf("%g\n", __enzyme_autodiff((void*)g, 2.0)); return 0; }
