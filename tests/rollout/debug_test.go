package rollout

import (
	"os"
	"testing"
)

func (h *history) dump(t *testing.T, target string) {
	if os.Getenv("DUMP") == "" {
		return
	}
	for _, o := range h.observations() {
		t.Logf("%s run=%s rec=%s ready=%s", o.name, o.running, recordString(o.record), conditionString(o.ready))
	}
}
