package fieldpath

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// Text is the string form of a value that In and NotIn compare with their values: a string as it
// is, a number as JSON writes it (1, 1.5), a bool as true or false, null as the empty string, and
// anything else as JSON. Comparing string forms is what lets a number or a bool match In, which
// Cartographer never allowed.
func Text(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case bool:
		return strconv.FormatBool(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case int:
		return strconv.Itoa(v)
	case json.Number:
		return v.String()
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
