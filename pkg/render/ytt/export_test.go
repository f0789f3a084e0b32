package ytt

import "testing"

// DataValueFlags are the --data-value-yaml flags Eval gives ytt for values.
func DataValueFlags(t *testing.T, values map[string]any) []string {
	kvs, err := dataValues(values)
	if err != nil {
		t.Fatal(err)
	}
	return kvs
}
