#include <iostream>
#include <string>
#include <unordered_map>
#include <cstdio>
extern "C" double __enzyme_autodiff(void*, ...);
static std::unordered_map<std::string, double> table = {{"a", 2.0}, {"b", 3.0}};
double f(double x) {
  std::cerr << "x = " << x << std::endl;
  double a = table.at("a");
  auto it = table.find(std::string("b"));
  return a * x * x + it->second * x;
}
int main() { std::printf("%g\n", __enzyme_autodiff((void*)f, 2.0)); return 0; }  // 2*2*2+3 = 11
