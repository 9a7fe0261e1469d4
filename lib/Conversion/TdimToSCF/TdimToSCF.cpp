//===- TdimToSCF.cpp - tdim kernels to functions over memrefs -----------===//

#include "nerve/Conversion/Passes.h"

#include "Patterns.h"

#include "nerve/Dialect/Tdim/IR/TdimBuilders.h"

#include "nerve/Dialect/Tdim/IR/TdimOps.h"
#include "nerve/Dialect/Tdim/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"

#include <map>

namespace nerve {
#define GEN_PASS_DEF_CONVERTTDIMTOSCF
#include "nerve/Conversion/Passes.h.inc"
} // namespace nerve

using namespace mlir;
using namespace nerve;
using namespace nerve::tdim;

MemRefType nerve::convertTdimTensorType(TdimTensorType type) {
  if (type.isRowMajor() && type.getOffset() == 0)
    return MemRefType::get(type.getSizes(), type.getElementType());
  auto layout = StridedLayoutAttr::get(type.getContext(), type.getOffset(),
                                       type.getEffectiveStrides());
  return MemRefType::get(type.getSizes(), type.getElementType(), layout);
}

TdimTypeConverter::TdimTypeConverter() {
  addConversion([](Type type) { return type; });
  addConversion([](TdimTensorType type) -> Type { return convertTdimTensorType(type); });
  addConversion([](TdimIndexType type) -> Type {
    return mlir::IndexType::get(type.getContext());
  });
  auto cast = [](OpBuilder &b, Type type, ValueRange inputs, Location loc) -> Value {
    return UnrealizedConversionCastOp::create(b, loc, type, inputs).getResult(0);
  };
  addSourceMaterialization(cast);
  addTargetMaterialization(cast);
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

/// Names the attribute with which a lowered kernel records, for each
/// dimension name of its signature, the argument and position its size is
/// read from (removed when the pass ends).
static constexpr llvm::StringLiteral kDimSources = "nerve.dim_sources";

Value nerve::tdim_to_scf::buildDimSize(OpBuilder &b, Location loc, Value memref,
                                       TdimTensorType tensor, DimAttr dim) {
  unsigned pos = *tensor.getPosition(dim);
  int64_t size = tensor.getSizes()[pos];
  if (size != ShapedType::kDynamic)
    return arith::ConstantIndexOp::create(b, loc, size);
  // Within the signature a dimension name has one size (the runtime checks
  // it), so every argument's extent of it is read from the same argument:
  // loops over the same dimensions then have the same bounds, which lets
  // the GPU mapping tell that they walk the same rows.
  if (auto arg = llvm::dyn_cast<BlockArgument>(memref))
    if (auto func = llvm::dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
        func && arg.getOwner() == &func.getBody().front())
      if (auto sources = func->getAttrOfType<DictionaryAttr>(kDimSources))
        if (auto source = sources.getAs<DenseI64ArrayAttr>(dim.str()))
          return memref::DimOp::create(b, loc, func.getArgument(source[0]), source[1]);
  return memref::DimOp::create(b, loc, memref, pos);
}

SmallVector<Value> nerve::tdim_to_scf::indicesFor(TdimTensorType tensor,
                                                  ArrayRef<DimAttr> dims,
                                                  ValueRange ivs) {
  SmallVector<Value> indices;
  for (DimAttr d : tensor.getDims()) {
    auto it = llvm::find(dims, d);
    indices.push_back(ivs[it - dims.begin()]);
  }
  return indices;
}

Value nerve::tdim_to_scf::convertFloat(OpBuilder &b, Location loc, Value value,
                                       Type type) {
  return tdim::buildElementConversion(b, loc, value, type);
}

SmallVector<Value> nerve::tdim_to_scf::inlineRegion(OpBuilder &b, Region &region,
                                                    ValueRange args, IRMapping mapping) {
  Block &block = region.front();
  mapping.map(block.getArguments(), args);
  for (Operation &op : block.without_terminator())
    b.clone(op, mapping);
  SmallVector<Value> results;
  for (Value v : llvm::cast<YieldOp>(block.getTerminator()).getValues())
    results.push_back(mapping.lookupOrDefault(v));
  return results;
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

namespace {

struct KernelLowering : OpConversionPattern<KernelOp> {
  using OpConversionPattern::OpConversionPattern;

  /// For each dynamic dimension of the signature (those of variable size
  /// excepted), the first argument that has it and its position there.
  static DictionaryAttr dimSources(KernelOp op) {
    Builder b(op.getContext());
    llvm::DenseSet<Attribute> variable;
    if (ArrayAttr dims = op.getVariableDimsAttr())
      variable.insert(dims.begin(), dims.end());
    std::map<std::string, SmallVector<int64_t, 2>> sources;
    for (auto [i, type] : llvm::enumerate(op.getArgumentTypes())) {
      auto tensor = llvm::dyn_cast<TdimTensorType>(type);
      if (!tensor)
        continue;
      for (auto [pos, d] : llvm::enumerate(tensor.getDims()))
        if (tensor.getSizes()[pos] == ShapedType::kDynamic && !variable.contains(d))
          sources.insert({d.str(), {int64_t(i), int64_t(pos)}});
    }
    SmallVector<NamedAttribute> entries;
    for (auto &[name, source] : sources)
      entries.push_back(b.getNamedAttr(name, b.getDenseI64ArrayAttr(source)));
    return b.getDictionaryAttr(entries);
  }

  LogicalResult matchAndRewrite(KernelOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    const TypeConverter &converter = *getTypeConverter();
    TypeConverter::SignatureConversion signature(op.getArgumentTypes().size());
    for (auto [i, type] : llvm::enumerate(op.getArgumentTypes()))
      signature.addInputs(i, converter.convertType(type));
    auto type = rewriter.getFunctionType(signature.getConvertedTypes(), {});
    auto func = func::FuncOp::create(rewriter, op.getLoc(), op.getSymName(), type);
    // The C interface takes each memref as one descriptor pointer, which is
    // what nerve's runtime builds for every argument.
    func->setAttr("llvm.emit_c_interface", rewriter.getUnitAttr());
    func->setAttr("nerve.kernel", rewriter.getUnitAttr());
    func->setAttr("nerve.arg_names", op.getArgNames());
    func->setAttr("nerve.num_outputs", op.getNumOutputsAttr());
    func->setAttr(kDimSources, dimSources(op));
    rewriter.inlineRegionBefore(op.getBody(), func.getBody(), func.end());
    if (!rewriter.applySignatureConversion(&func.getBody().front(), signature,
                                           &converter))
      return failure();
    rewriter.eraseOp(op);
    return success();
  }
};

struct ReturnLowering : OpConversionPattern<ReturnOp> {
  using OpConversionPattern::OpConversionPattern;
  LogicalResult matchAndRewrite(ReturnOp op, OpAdaptor,
                                ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<func::ReturnOp>(op);
    return success();
  }
};

struct ConvertTdimToSCFPass
    : nerve::impl::ConvertTdimToSCFBase<ConvertTdimToSCFPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    TdimTypeConverter converter;
    RewritePatternSet patterns(ctx);
    populateTdimToSCFConversionPatterns(converter, patterns);
    ConversionTarget target(*ctx);
    target.addIllegalDialect<TdimDialect>();
    target.addLegalDialect<arith::ArithDialect, func::FuncDialect, math::MathDialect, fold::FoldDialect,
                           memref::MemRefDialect, scf::SCFDialect>();
    target.addLegalOp<UnrealizedConversionCastOp, gpumap::TiledContractOp, gpumap::YieldOp>();
    if (failed(applyPartialConversion(getOperation(), target, std::move(patterns))))
      return signalPassFailure();
    getOperation()->walk([](func::FuncOp f) { f->removeAttr(kDimSources); });
  }
};

} // namespace

void nerve::populateTdimToSCFConversionPatterns(const TdimTypeConverter &converter,
                                                RewritePatternSet &patterns) {
  patterns.add<KernelLowering, ReturnLowering>(converter, patterns.getContext());
  tdim_to_scf::populateIndexPatterns(converter, patterns);
  tdim_to_scf::populateMemoryPatterns(converter, patterns);
  tdim_to_scf::populateTensorOpPatterns(converter, patterns);
  // Composite ops first become maps and reductions, which lower below.
  tdim::populateDecompositionPatterns(patterns);
}
