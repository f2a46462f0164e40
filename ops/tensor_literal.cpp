// ag::tensor: tensors from nested braced lists (attograd/factory.h).
#include "op_util.h"

namespace ag {

void TensorData::add(Scalar v) {
  values_.push_back(v);
  if (empty_ || v.kind() > kind_) kind_ = v.kind();
  empty_ = false;
}

TensorData::TensorData(std::initializer_list<TensorData> list) {
  const TensorData* first = list.size() ? list.begin() : nullptr;
  shape_ = {static_cast<int64_t>(list.size())};
  if (!first) {  // {}: shape [0]
    kind_ = Scalar::Kind::floating;
    return;
  }
  for (int64_t d : first->shape_) shape_.push_back(d);
  for (const TensorData& sub : list) {
    AG_CHECK(sub.shape_ == first->shape_, ShapeError, "tensor: expected all sub-lists to have sizes ", first->shape_,
             ", but got a sub-list with sizes ", sub.shape_, " (a ragged list)");
    for (const Scalar& v : sub.values_) add(v);
  }
  if (empty_) kind_ = Scalar::Kind::floating;  // {{}, {}}: no element to infer from
}

Tensor tensor(const TensorData& data, std::optional<DType> dtype) {
  const DType inferred = data.kind() == Scalar::Kind::floating   ? get_default_dtype()
                         : data.kind() == Scalar::Kind::integral ? DType::i64
                                                                 : DType::b8;
  const DType out = dtype.value_or(inferred);
  const std::vector<Scalar>& v = data.values();
  Tensor t;
  if (data.kind() == Scalar::Kind::floating) {  // exact in double; one rounding to f32
    std::vector<double> d(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) d[i] = v[i].to_double();
    t = Tensor::from_vector(d, data.shape());
  } else {  // exact in int64
    std::vector<int64_t> d(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) d[i] = v[i].to_int();
    t = Tensor::from_vector(d, data.shape());
    if (data.kind() == Scalar::Kind::boolean && out == DType::b8) return K::convert(t, DType::b8);
  }
  return t.dtype() == out ? t : K::convert(t, out);
}

}  // namespace ag
