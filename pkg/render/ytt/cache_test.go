package ytt

import (
	"fmt"
	"strings"
	"testing"
)

// The cache gives the same compiled template for the same source, keeps no template over
// maxCachedSource bytes, and never holds more than maxCacheSize bytes of source.
func TestCacheIsBounded(t *testing.T) {
	c := &cache{entries: map[string]*Template{}}
	src := "a: #@ 1\n"
	if first := c.get(src); c.get(src) != first {
		t.Error("the same source compiled twice")
	}
	big := "a: #@ 1\n" + strings.Repeat("#! padding\n", maxCachedSource/11+1)
	if first := c.get(big); c.get(big) == first {
		t.Error("a template over maxCachedSource was kept")
	}
	for i := range 2 * maxCacheSize / 1024 {
		c.get(fmt.Sprintf("a: #@ %d\n%s", i, strings.Repeat("#! padding\n", 90)))
		if c.size > maxCacheSize {
			t.Fatalf("after %d templates the cache holds %d bytes of source, over %d", i+1, c.size, maxCacheSize)
		}
	}
}
