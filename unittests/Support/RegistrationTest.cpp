//===- RegistrationTest.cpp - nerve's dialect registration ------------------===//

#include "nerve/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

TEST(Registration, LoadsNerveDialects) {
  mlir::DialectRegistry registry;
  nerve::registerAllDialects(registry);
  mlir::MLIRContext context(registry);
  EXPECT_NE(context.getOrLoadDialect("tdim"), nullptr);
  EXPECT_NE(context.getOrLoadDialect("neuron"), nullptr);
  EXPECT_NE(context.getOrLoadDialect("gpu"), nullptr);
  EXPECT_EQ(context.getOrLoadDialect("no_such_dialect"), nullptr);
}
