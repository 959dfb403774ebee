/// The compiled part of the pagecheck Python package (tools/python/pagecheck imports it).
#include <pybind11/pybind11.h>

#include "bindings.h"

PYBIND11_MODULE(_pagecheck, m) {
  m.doc() =
      "pagecheck's C++ reference, tolerance model, generators, verifier and golden reader "
      "(docs/python.md)";
  pybind11::module_ reference = m.def_submodule("reference");
  pagecheck::python::bind_reference(reference);
  pagecheck::python::bind_compare(m);
  pagecheck::python::bind_verify(m);
  pybind11::module_ golden = m.def_submodule("golden");
  pagecheck::python::bind_golden(golden);
}
