//===- HostObject.cpp - lowered host code to a relocatable object -------===//

#include "HostObject.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ExecutionEngine/Orc/JITTargetMachineBuilder.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include <algorithm>
#include <mutex>
#include <tuple>

using namespace nerve;

void nerve::initializeHostTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

const std::string &nerve::hostCPUDescription() {
  static const std::string description = [] {
    std::string d = llvm::sys::getProcessTriple() + " " + llvm::sys::getHostCPUName().str();
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    std::vector<std::string> enabled;
    for (auto &f : features)
      if (f.second)
        enabled.push_back(f.first().str());
    std::sort(enabled.begin(), enabled.end());
    for (const std::string &f : enabled)
      d += " +" + f;
    return d;
  }();
  return description;
}

/// Replaces llvm.global_ctors / llvm.global_dtors by `_nerve_init` /
/// `_nerve_fini`, which call them in priority order (destructors in
/// reverse).
static void lowerStructors(llvm::Module &m, const char *arrayName, const char *symbol,
                           bool reverse) {
  llvm::LLVMContext &ctx = m.getContext();
  // (priority, order of appearance): equal priorities keep their order.
  std::vector<std::tuple<uint64_t, size_t, llvm::Function *>> calls;
  if (llvm::GlobalVariable *array = m.getGlobalVariable(arrayName)) {
    if (auto *init = llvm::dyn_cast_or_null<llvm::ConstantArray>(array->getInitializer()))
      for (llvm::Value *op : init->operands()) {
        auto *entry = llvm::dyn_cast<llvm::ConstantStruct>(op);
        if (!entry)
          continue;
        auto *priority = llvm::dyn_cast<llvm::ConstantInt>(entry->getOperand(0));
        auto *fn = llvm::dyn_cast<llvm::Function>(entry->getOperand(1));
        if (priority && fn)
          calls.push_back({priority->getZExtValue(), calls.size(), fn});
      }
    array->eraseFromParent();
  }
  std::sort(calls.begin(), calls.end());
  if (reverse)
    std::reverse(calls.begin(), calls.end());
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage, symbol, m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  for (auto &call : calls)
    b.CreateCall(std::get<2>(call));
  b.CreateRetVoid();
}

/// `_nerve_packed_<entry>(ptr %args)`: loads each argument through
/// `args[i]` and calls `_mlir_ciface_<entry>`.
static Status addPackedEntry(llvm::Module &m, const std::string &entry) {
  llvm::Function *callee = m.getFunction("_mlir_ciface_" + entry);
  if (!callee)
    return Status::error("kernel @" + entry + " has no entry point after lowering");
  if (!callee->getReturnType()->isVoidTy())
    return Status::error("kernel @" + entry + " returns a value after lowering");
  llvm::LLVMContext &ctx = m.getContext();
  auto *ptr = llvm::PointerType::getUnqual(ctx);
  auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx), {ptr}, false);
  auto *fn = llvm::Function::Create(type, llvm::GlobalValue::ExternalLinkage,
                                    packedEntrySymbol(entry), m);
  llvm::IRBuilder<> b(llvm::BasicBlock::Create(ctx, "entry", fn));
  llvm::SmallVector<llvm::Value *> args;
  for (auto [i, param] : llvm::enumerate(callee->args())) {
    llvm::Value *slot = b.CreateConstGEP1_64(ptr, fn->getArg(0), i);
    llvm::Value *address = b.CreateLoad(ptr, slot);
    args.push_back(b.CreateLoad(param.getType(), address));
  }
  b.CreateCall(callee, args);
  b.CreateRetVoid();
  return Status();
}

/// Replaces the constant upstream's gpu.binary translation embeds for
/// @`binary` (`<binary>_binary`) by a reference to ptxSymbol(binary).
static Status externalizeDeviceCode(llvm::Module &m, const std::string &binary) {
  llvm::GlobalVariable *embedded = m.getGlobalVariable(binary + "_binary", /*AllowInternal=*/true);
  if (!embedded)
    return Status::error("the host code has no device code for @" + binary);
  auto *type = llvm::Type::getInt8Ty(m.getContext());
  auto *external = new llvm::GlobalVariable(
      m, type, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage, nullptr, ptxSymbol(binary));
  embedded->replaceAllUsesWith(external);
  embedded->eraseFromParent();
  return Status();
}

Result<std::string> nerve::emitHostObject(mlir::ModuleOp module,
                                          const std::vector<std::string> &entries,
                                          unsigned optLevel) {
  initializeHostTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder)
    return Status::error("cannot describe the host CPU: " + llvm::toString(builder.takeError()));
  builder->setCodeGenOptLevel(static_cast<llvm::CodeGenOptLevel>(optLevel));
  builder->setRelocationModel(llvm::Reloc::PIC_);
  auto machine = builder->createTargetMachine();
  if (!machine)
    return Status::error("cannot target the host CPU: " + llvm::toString(machine.takeError()));

  std::vector<std::string> binaries;
  for (auto binary : module.getOps<mlir::gpu::BinaryOp>())
    binaries.push_back(binary.getSymName().str());

  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> m = mlir::translateModuleToLLVMIR(module, ctx, "nerve");
  if (!m)
    return Status::error("translating the host code to LLVM IR failed");
  for (const std::string &binary : binaries)
    if (Status s = externalizeDeviceCode(*m, binary); !s)
      return s;
  m->setTargetTriple((*machine)->getTargetTriple());
  m->setDataLayout((*machine)->createDataLayout());
  lowerStructors(*m, "llvm.global_ctors", kHostInitSymbol, /*reverse=*/false);
  lowerStructors(*m, "llvm.global_dtors", kHostFiniSymbol, /*reverse=*/true);
  for (const std::string &entry : entries)
    if (Status s = addPackedEntry(*m, entry); !s)
      return s;

  auto optimize = mlir::makeOptimizingTransformer(optLevel, /*sizeLevel=*/0, machine->get());
  if (llvm::Error e = optimize(m.get()))
    return Status::error("optimising the host code failed: " + llvm::toString(std::move(e)));

  llvm::SmallVector<char, 0> object;
  llvm::raw_svector_ostream os(object);
  llvm::legacy::PassManager codegen;
  if ((*machine)->addPassesToEmitFile(codegen, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return Status::error("the host target cannot emit object files");
  codegen.run(*m);
  return std::string(object.begin(), object.end());
}
