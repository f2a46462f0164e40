// Containers and shape modules as a PyTorch port writes them: ModuleList (negative
// indices, append / extend / insert), ModuleDict, ParameterList, ParameterDict, Identity,
// Flatten, Unflatten; state-dict keys as PyTorch's; a custom module without a name.
#include <attograd/attograd.h>
#include <doctest/doctest.h>

#include <algorithm>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "test_util.h"

using namespace ag;
using test_util::contains;
using test_util::error_of;

namespace {

template <class V>
std::vector<std::string> keys_of(const V& v) {
  std::vector<std::string> out;
  for (auto& e : v) out.push_back(e.first);
  return out;
}

std::string str(const nn::Module& m) {
  std::ostringstream os;
  os << m;
  return os.str();
}

std::vector<std::string> state_keys(const nn::Module& m) {
  std::vector<std::string> out;
  for (auto& e : m.state_dict()) out.push_back(e.first);
  std::sort(out.begin(), out.end());
  return out;
}

// PyTorch: class Net(nn.Module) with layers = ModuleList, heads = ModuleDict,
// scales = ParameterList, gains = ParameterDict. No name passed to Module.
struct NetImpl : nn::Module {
  NetImpl() {
    layers = register_module("layers", nn::ModuleList(nn::Linear(2, 3), nn::ReLU()));
    heads = register_module("heads", nn::ModuleDict(nn::ModuleDictImpl::Items{{"cls", nn::Linear(3, 2).ptr()}}));
    scales = register_module("scales", nn::ParameterList(std::vector<Tensor>{ones({3}), zeros({2})}));
    gains = register_module("gains", nn::ParameterDict(nn::ParameterDictImpl::Items{{"a", ones({1})}}));
  }
  nn::ModuleList layers{nullptr};
  nn::ModuleDict heads{nullptr};
  nn::ParameterList scales{nullptr};
  nn::ParameterDict gains{nullptr};
};
AG_MODULE(Net);

}  // namespace

TEST_CASE("a custom module without a name is named after its class, as PyTorch's") {
  Net net;
  CHECK(net->type_name() == "Net");  // NetImpl, without the namespace and "Impl"
  CHECK(net->name() == "Net");
  CHECK(contains(str(*net), "Net(\n  (layers): ModuleList("));
  // Error messages name it too.
  CHECK(contains(error_of<KeyError>([&] { net->register_buffer("layers", zeros({1})); }), "Net: cannot register"));
}

TEST_CASE("state-dict keys of the containers are PyTorch's") {
  Net net;
  CHECK(state_keys(*net) == std::vector<std::string>{"gains.a", "heads.cls.bias", "heads.cls.weight", "layers.0.bias",
                                                     "layers.0.weight", "scales.0", "scales.1"});
  for (auto& p : net->parameters()) CHECK(p.requires_grad());  // nn.Parameter's default
}

TEST_CASE("ModuleList: negative index, IndexError, append / extend / insert renumber") {
  nn::ModuleList list(nn::Linear(2, 3), nn::ReLU());
  CHECK(list->size() == 2);
  CHECK(list[-1]->type_name() == "ReLU");  // Python's list[-1]
  CHECK(list->at<nn::LinearImpl>(-2)->weight.shape() == Shape({3, 2}));
  CHECK(contains(error_of<IndexError>([&] { (*list)[2]; }), "index 2 is out of range for 2"));
  CHECK_THROWS_AS((*list)[-3], IndexError);
  nn::Linear last(3, 1);
  list->append(last);
  list->extend(std::vector<nn::Linear>{nn::Linear(1, 1)});
  list->extend(nn::ModuleList(nn::GELU()));
  CHECK(list->size() == 5);
  CHECK(list[2] == last.ptr());
  // insert renames the later modules and keeps the state dict in list order.
  nn::Identity id;
  list->insert(1, id);
  CHECK(list[1] == id.ptr());
  CHECK(list[3] == last.ptr());
  CHECK(keys_of(list->named_children()) == std::vector<std::string>{"0", "1", "2", "3", "4", "5"});
  CHECK(keys_of(list->named_parameters()) ==
        std::vector<std::string>{"0.weight", "0.bias", "3.weight", "3.bias", "4.weight", "4.bias"});
  list->insert(-1, nn::ReLU());  // before the last, as Python's insert(-1, m)
  CHECK(list[-2]->type_name() == "ReLU");
  CHECK(list[-1]->type_name() == "GELU");
  CHECK_THROWS_AS(list->insert(9, nn::ReLU()), IndexError);
  int n = 0;
  for (auto& m : *list) n += m != nullptr;
  CHECK(n == 7);
}

TEST_CASE("ModuleDict: keys in order, replace in place, pop, clear, update, KeyError") {
  nn::ModuleDict d(nn::ModuleDictImpl::Items{{"enc", nn::Linear(2, 2).ptr()}, {"act", nn::ReLU().ptr()}});
  CHECK(d->size() == 2);
  CHECK(d->contains("enc"));
  CHECK_FALSE(d->contains("dec"));
  CHECK(d["act"]->type_name() == "ReLU");
  CHECK(d->at<nn::LinearImpl>("enc")->weight.shape() == Shape({2, 2}));
  CHECK(contains(error_of<KeyError>([&] { d["dec"]; }), "'dec'"));
  CHECK(contains(error_of<ValueError>([&] { d->at<nn::LinearImpl>("act"); }), "ReLU"));
  nn::Linear dec(2, 4);
  d->insert("dec", dec);
  d->insert("enc", nn::Linear(2, 5));  // replaced where it was
  CHECK(d->keys() == std::vector<std::string>{"enc", "act", "dec"});
  CHECK(d->at<nn::LinearImpl>("enc")->weight.shape() == Shape({5, 2}));
  CHECK(keys_of(d->state_dict()).size() == 4);
  CHECK(d->values()[2] == dec.ptr());
  CHECK(d->pop("act")->type_name() == "ReLU");
  CHECK(d->keys() == std::vector<std::string>{"enc", "dec"});
  CHECK_THROWS_AS(d->pop("act"), KeyError);
  nn::ModuleDict other(nn::ModuleDictImpl::Items{{"extra", nn::GELU().ptr()}});
  d->update(*other);
  CHECK(d->keys() == std::vector<std::string>{"enc", "dec", "extra"});
  CHECK_THROWS_AS(d->insert("a.b", nn::ReLU()), ValueError);  // PyTorch: name can't contain "."
  d->clear();
  CHECK(d->is_empty());
  CHECK(d->parameters().empty());
}

TEST_CASE("ParameterList: append, negative index, shared handles, IndexError") {
  nn::ParameterList ps;
  Tensor w = zeros({2, 2});
  ps->append(w);
  ps->extend({ones({3}), full({1}, 2.0)});
  CHECK(ps->size() == 3);
  CHECK((*ps)[-1].item<double>() == 2.0);
  CHECK((*ps)[0].shares_storage(w));
  CHECK((*ps)[0].requires_grad());
  CHECK(keys_of(ps->named_parameters()) == std::vector<std::string>{"0", "1", "2"});
  CHECK(contains(error_of<IndexError>([&] { (*ps)[3]; }), "ParameterList: index 3 is out of range for 3"));
  // The registry reads the list's own handles: an optimizer step shows through both.
  (*ps)[1] = full({3}, 7.0);
  CHECK(ps->state_dict().at("1").to_vector<double>() == std::vector<double>{7, 7, 7});
  int n = 0;
  for (const Tensor& p : *ps) n += static_cast<int>(p.numel());
  CHECK(n == 8);
}

TEST_CASE("ParameterDict: insert / get / contains / pop / update, replace in place") {
  nn::ParameterDict pd(nn::ParameterDictImpl::Items{{"a", ones({2})}, {"b", zeros({3})}});
  CHECK(pd->contains("a"));
  CHECK(pd->get("b").shape() == Shape({3}));
  CHECK((*pd)["a"].requires_grad());
  pd->insert("a", full({4}, 3.0));  // replaced where it was
  CHECK(pd->keys() == std::vector<std::string>{"a", "b"});
  CHECK(pd->state_dict().at("a").shape() == Shape({4}));
  CHECK(contains(error_of<KeyError>([&] { pd->get("c"); }), "'c'"));
  CHECK(pd->pop("b").shape() == Shape({3}));
  CHECK(pd->keys() == std::vector<std::string>{"a"});
  pd->update({{"c", zeros({1})}});
  CHECK(pd->size() == 2);
  CHECK(pd->values()[1].shape() == Shape({1}));
  pd->clear();
  CHECK(pd->is_empty());
  CHECK(pd->parameters().empty());
}

TEST_CASE("Identity, Flatten, Unflatten: shapes and printing as PyTorch's") {
  Tensor x = arange(0, 24, 1, DType::f64).reshape({2, 3, 4});
  nn::Identity id;
  CHECK(id(x).impl() == x.impl());
  nn::Flatten flat;
  CHECK(flat(x).shape() == Shape({2, 12}));
  CHECK(nn::Flatten(nn::FlattenOptions().start_dim(0).end_dim(1))(x).shape() == Shape({6, 4}));
  nn::Unflatten unflat(1, std::vector<int64_t>{3, 4});
  Tensor y = unflat(flat(x));
  CHECK(y.shape() == Shape({2, 3, 4}));
  CHECK(y.to_vector<double>() == x.to_vector<double>());
  CHECK(str(*flat) == "Flatten(start_dim=1, end_dim=-1)");
  CHECK(str(*unflat) == "Unflatten(dim=1, unflattened_size=(3, 4))");
  CHECK_THROWS_AS(unflat(zeros({2, 5})), ShapeError);
}

TEST_CASE("LibTorch's indexing: seq[i], list[i], ptr<T>(i) without casts, Tensor's x[i] and x[idx]") {
  ag::manual_seed(2);
  ag::nn::Sequential seq(ag::nn::Linear(4, 3), ag::nn::ReLU(), ag::nn::Linear(3, 2));
  CHECK(seq[0]->type_name() == std::string("Linear"));
  CHECK(seq[-1].get() == seq->ptr(2).get());
  std::shared_ptr<ag::nn::LinearImpl> last = seq->ptr<ag::nn::LinearImpl>(2);  // typed, no cast at the call
  CHECK(last->weight.shape() == ag::Shape{2, 3});
  CHECK_THROWS_AS(seq->ptr<ag::nn::LinearImpl>(1), ag::ValueError);
  CHECK_THROWS_AS(seq[3], ag::IndexError);
  int n = 0;
  for (const auto& m : *seq) n += m != nullptr;
  CHECK(n == 3);

  ag::nn::ModuleList list;
  list->push_back(ag::nn::Linear(2, 2));
  list->push_back(ag::nn::Linear(2, 5));
  CHECK(list[1].get() == list->ptr(1).get());
  CHECK(list->ptr<ag::nn::LinearImpl>(-1)->weight.shape() == ag::Shape{5, 2});

  const ag::Tensor x = ag::arange(12, ag::DType::f32).reshape({3, 4});
  CHECK(x[1].shape() == ag::Shape{4});
  CHECK(x[-1][0].item<double>() == 8.0);
  CHECK(x[1].data<float>() == x.data<float>() + 4);  // a view
  CHECK(x[ag::tensor({2, 0})].shape() == ag::Shape{2, 4});
  CHECK(x[ag::tensor({2, 0})][0][3].item<double>() == 11.0);
  CHECK_THROWS_AS(x[3], ag::IndexError);
}
