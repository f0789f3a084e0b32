package expr

import (
	"errors"
	"reflect"

	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// JSON values as CEL values, cheaply.
//
// cel-go wraps a map[string]any in two heap objects and a []any in a reflection-based list, and
// does so again every time an expression touches the value: iterating over five conditions costs
// ten allocations before any comparison runs. Unstructured content holds only JSON types, so the
// adapter here wraps a map as the map itself (a named map type: storing it in an interface does not
// allocate) and a list as a slice header. Lookups and iteration, the hot paths, are implemented
// here; every other operation (equality, conversion, concatenation, membership) is delegated to
// cel-go's own wrappers, so the semantics stay cel-go's.

// jsonAdapter is the environment's type adapter: JSON values here, anything else to next.
type jsonAdapter struct {
	next types.Adapter
}

// NativeToValue wraps JSON values cheaply and hands anything else to next.
func (a jsonAdapter) NativeToValue(v any) ref.Val {
	if x, ok := v.(ref.Val); ok {
		return x
	}
	if x, ok := asJSON(v); ok {
		return x
	}
	return a.next.NativeToValue(v)
}

// jsonValue converts a value found inside unstructured content.
func jsonValue(v any) ref.Val {
	if x, ok := asJSON(v); ok {
		return x
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// asJSON wraps a JSON value: a map as a jsonMap, a list as a jsonList, a scalar as cel-go's type.
func asJSON(v any) (ref.Val, bool) {
	switch x := v.(type) {
	case map[string]any:
		return jsonMap(x), true
	case []any:
		return jsonList(x), true
	case string:
		return types.String(x), true
	case int64:
		return types.Int(x), true
	case float64:
		return types.Double(x), true
	case bool:
		return types.Bool(x), true
	case nil:
		return types.NullValue, true
	}
	return nil, false
}

var celJSONAdapter = jsonAdapter{next: types.DefaultTypeAdapter}

// jsonMap is a JSON object as a CEL map(string, dyn).
type jsonMap map[string]any

var _ traits.Mapper = jsonMap(nil)

func (m jsonMap) base() ref.Val {
	return types.NewStringInterfaceMap(celJSONAdapter, map[string]any(m))
}

func (m jsonMap) ConvertToNative(t reflect.Type) (any, error) { return m.base().ConvertToNative(t) }
func (m jsonMap) ConvertToType(t ref.Type) ref.Val            { return m.base().ConvertToType(t) }
func (m jsonMap) Equal(other ref.Val) ref.Val                 { return m.base().Equal(other) }
func (m jsonMap) Type() ref.Type                              { return types.MapType }
func (m jsonMap) Value() any                                  { return map[string]any(m) }
func (m jsonMap) Size() ref.Val                               { return types.Int(len(m)) }
func (m jsonMap) IsZeroValue() bool                           { return len(m) == 0 }

func (m jsonMap) Contains(key ref.Val) ref.Val {
	_, found := m.Find(key)
	return types.Bool(found)
}

func (m jsonMap) Get(key ref.Val) ref.Val {
	v, found := m.Find(key)
	if !found {
		return types.ValOrErr(v, "no such key: %v", key)
	}
	return v
}

func (m jsonMap) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	v, found := m[string(k)]
	if !found {
		return nil, false
	}
	return jsonValue(v), true
}

func (m jsonMap) Iterator() traits.Iterator {
	keys := make([]any, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return &jsonIterator{values: keys}
}

func (m jsonMap) Fold(f traits.Folder) {
	for k, v := range m {
		if !f.FoldEntry(k, v) {
			break
		}
	}
}

// jsonList is a JSON array as a CEL list(dyn).
type jsonList []any

var _ traits.Lister = jsonList(nil)

func (l jsonList) base() traits.Lister { return types.NewDynamicList(celJSONAdapter, []any(l)) }

func (l jsonList) Add(other ref.Val) ref.Val                   { return l.base().Add(other) }
func (l jsonList) Contains(elem ref.Val) ref.Val               { return l.base().Contains(elem) }
func (l jsonList) ConvertToNative(t reflect.Type) (any, error) { return l.base().ConvertToNative(t) }
func (l jsonList) ConvertToType(t ref.Type) ref.Val            { return l.base().ConvertToType(t) }
func (l jsonList) Equal(other ref.Val) ref.Val                 { return l.base().Equal(other) }
func (l jsonList) Type() ref.Type                              { return types.ListType }
func (l jsonList) Value() any                                  { return []any(l) }
func (l jsonList) Size() ref.Val                               { return types.Int(len(l)) }
func (l jsonList) IsZeroValue() bool                           { return len(l) == 0 }
func (l jsonList) Iterator() traits.Iterator                   { return &jsonIterator{values: l} }

func (l jsonList) Get(index ref.Val) ref.Val {
	i, err := types.IndexOrError(index)
	if err != nil {
		return types.ValOrErr(index, "%v", err)
	}
	if i < 0 || i >= len(l) {
		return types.NewErr("index '%d' out of range in list size '%d'", i, len(l))
	}
	return jsonValue(l[i])
}

func (l jsonList) Fold(f traits.Folder) {
	for i, v := range l {
		if !f.FoldEntry(i, v) {
			break
		}
	}
}

// jsonIterator walks the entries of a jsonList or the keys of a jsonMap.
type jsonIterator struct {
	values []any
	next   int
}

var _ traits.Iterator = (*jsonIterator)(nil)

func (it *jsonIterator) HasNext() ref.Val { return types.Bool(it.next < len(it.values)) }

func (it *jsonIterator) Next() ref.Val {
	if it.next >= len(it.values) {
		return nil
	}
	v := it.values[it.next]
	it.next++
	return jsonValue(v)
}

func (it *jsonIterator) ConvertToNative(reflect.Type) (any, error) {
	return nil, errIteratorValue
}

func (it *jsonIterator) ConvertToType(ref.Type) ref.Val {
	return types.NewErr("iterator is not a value")
}
func (it *jsonIterator) Equal(ref.Val) ref.Val { return types.NewErr("iterator is not a value") }
func (it *jsonIterator) Type() ref.Type        { return types.IteratorType }
func (it *jsonIterator) Value() any            { return nil }

var errIteratorValue = errors.New("iterator is not a value")
