package web_test

import (
	"testing"

	"github.com/surveyor-dev/surveyor/pkg/web"
)

// A stream whose feed rendered the store as of change 2 sends nothing when only change 3
// touched its page: that change goes out with the id of the rendering that shows it
// (TestStreamSendsThePageOnEveryChangeItShows flaked when the feed's rendering at 2 was sent
// because of 3, with id 2).
func TestChangedBetweenCountsNoLaterChange(t *testing.T) {
	store := web.NewStore()
	store.SetOwner(workload("dev", "app", Unknown, "waiting"))   // 1
	store.SetOwner(workload("dev", "other", False, "elsewhere")) // 2
	store.SetOwner(workload("dev", "app", False, "broken"))      // 3
	app := func(k web.Key) bool { return k.Name == "app" }
	for _, c := range []struct {
		from, to uint64
		want     bool
	}{
		{1, 2, false}, // only other changed
		{1, 3, true},
		{2, 3, true},
		{3, 3, false},
		{0, 1, true},
		{2, 99, true}, // to beyond the store: up to its last change
	} {
		if got := store.ChangedBetween(c.from, c.to, app); got != c.want {
			t.Errorf("ChangedBetween(%d, %d) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
	if !store.ChangedSince(2, app) || store.ChangedSince(3, app) {
		t.Errorf("ChangedSince(2) must see change 3, ChangedSince(3) nothing")
	}
}
