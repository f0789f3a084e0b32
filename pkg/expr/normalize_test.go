package expr

import (
	"fmt"
	"strings"
	"testing"
)

func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"bare", "spec.x", "{.spec.x}"},
		{"dotted", ".spec.x", "{.spec.x}"},
		{"braced", "{.spec.x}", "{.spec.x}"},
		{"braced without dot", "{spec.x}", "{.spec.x}"},
		{"root", "$.spec.x", "{.spec.x}"},
		{"braced root", "{$.spec.x}", "{.spec.x}"},
		{"white space", " \t spec.x \n", "{.spec.x}"},
		{"escaped trailing space kept", `spec.x\ `, `{.spec.x\ }`},
		{"quoted key", "metadata.labels['a.b/c']", `{.metadata.labels.a\.b/c}`},
		{"double-quoted key", `metadata.labels["a.b/c"]`, `{.metadata.labels.a\.b/c}`},
		{"quoted key at the root", "$['metadata']['name']", "{.metadata.name}"},
		{"index at the root", "[0].x", "{[0].x}"},
		{"recursive descent", "..name", "{..name}"},
		{"recursive descent from the root", "$..name", "{..name}"},
		{"filter untouched", "spec.env[?(@.name=='x')].value", "{.spec.env[?(@.name=='x')].value}"},
		{"union untouched", "spec['a','b']", "{.spec['a','b']}"},
		{"empty key untouched", `spec[""]`, `{.spec[""]}`},
		{"backslash key, then a key", `['\']['0']`, `{.\\.0}`},
		{"quote in a key escaped", `['a"b']['c']`, `{.a\"b.c}`},
		{"bracket after a backslash is no key", `a\['b']`, `{.a\['b']}`},
		{"bracket within quotes is no key", `a['['0']']`, `{.a['['0']']}`},
		{"a key's backslash escapes no quote", `{$['a\']'}'}`, `{.a\\'}'}`},
		{"a key's brace closes no action", `{x['a}']`, `{x.a\}`},
		{"an escaped brace closes no action", `{a\}`, `{a\}`},
		{"a key after a dot is no descent", `spec.['a.b']`, `{.spec.a\.b}`},
		{"a key after a dot in an unclosed action", `{.['a']`, `{.a`},
		{"a key after an escaped dot", `a\.['b']`, `{.a\..b}`},
		{"a key after recursive descent", `..['a']`, `{..a}`},
		{"unclosed action as written", "{.spec", "{.spec"},
		{"several actions as written", "{.a}{.b}", "{.a}{.b}"},
		{"brace in a filter string is one action", `{.a[?(@.b=="}")]}`, `{.a[?(@.b=="}")]}`},
		{"empty", "", "{.}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := normalize(tt.in)
			if got != tt.want {
				t.Errorf("normalize(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := normalize(got); again != got {
				t.Errorf("normalize is not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newCache[int](3)
	for i, k := range []string{"a", "b", "c"} {
		c.add(k, i)
	}
	c.get("a") // b is now the least recently used
	c.add("d", 3)
	if _, ok := c.get("b"); ok {
		t.Error("b survived although it was the least recently used")
	}
	for _, k := range []string{"a", "c", "d"} {
		if _, ok := c.get(k); !ok {
			t.Errorf("%s was evicted", k)
		}
	}
	if got := c.add("a", 99); got != 0 {
		t.Errorf("add of a cached key returned %d, want the cached 0", got)
	}
	if c.len() != 3 {
		t.Errorf("len = %d, want 3", c.len())
	}
}

// TestPathCacheIsBounded feeds the path cache more distinct texts than it holds: it stays at its
// bound, and the paths used all along stay cached.
func TestPathCacheIsBounded(t *testing.T) {
	hot, err := ParsePath("status.hot")
	if err != nil {
		t.Fatal(err)
	}
	for i := range maxCachedPaths + 100 {
		if _, err := ParsePath(fmt.Sprintf("status.cold%d", i)); err != nil {
			t.Fatal(err)
		}
		if i%100 == 0 {
			if again, _ := ParsePath("status.hot"); again != hot {
				t.Fatal("a path in constant use was evicted")
			}
		}
	}
	if n := pathCache.len(); n > maxCachedPaths {
		t.Errorf("the path cache holds %d paths, more than its bound %d", n, maxCachedPaths)
	}
}

// TestNormalizeAllShortPaths checks FuzzPath's invariants on normalize for every path of up to
// five pieces drawn from the pieces its rules turn on: it is idempotent, and it gives recursive
// descent only to a path that asks for it. Fuzzing found such inputs one at a time; this finds
// every short one on each run.
func TestNormalizeAllShortPaths(t *testing.T) {
	pieces := []string{"{", "}", "[", "]", "'", `"`, `\`, ".", "$", "a", " ", "['", "']", `["`, `"]`, "['a']", "['}']"}
	failures := 0
	var walk func(path string, n int)
	walk = func(path string, n int) {
		once := normalize(path)
		if twice := normalize(once); twice != once {
			t.Errorf("normalize is not idempotent: %q -> %q -> %q", path, once, twice)
			failures++
		} else if strings.HasPrefix(once, "{..") && !asksDescent(path) {
			t.Errorf("normalize(%q) = %q turns a root key into recursive descent", path, once)
			failures++
		}
		if failures > 10 {
			t.FailNow()
		}
		if n < 5 {
			for _, p := range pieces {
				walk(path+p, n+1)
			}
		}
	}
	walk("", 0)
}
