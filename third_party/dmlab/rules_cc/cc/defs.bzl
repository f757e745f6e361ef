"""A stand-in for rules_cc's cc/defs.bzl: Bazel's native C++ rules under rules_cc's names.

Bazel 4.2.3 (Debian's bazel-bootstrap) loads @rules_cc//cc:defs.bzl from its own tool packages
and would fetch rules_cc from the network. Debian's bazel-rules-cc is written for a newer Bazel.
These are the symbols Bazel's embedded tools load, each the native rule of that name.
"""

def cc_binary(**attrs):
    native.cc_binary(**attrs)

def cc_library(**attrs):
    native.cc_library(**attrs)

def cc_test(**attrs):
    native.cc_test(**attrs)

def cc_import(**attrs):
    native.cc_import(**attrs)

def cc_proto_library(**attrs):
    native.cc_proto_library(**attrs)

def cc_toolchain(**attrs):
    native.cc_toolchain(**attrs)

def cc_toolchain_suite(**attrs):
    native.cc_toolchain_suite(**attrs)

def objc_library(**attrs):
    native.objc_library(**attrs)
