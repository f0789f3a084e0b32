package harness

import (
	"os"
	"testing"
)

func TestReadProc(t *testing.T) {
	st, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if st.RSS == 0 || st.HWM < st.RSS {
		t.Errorf("RSS %d, HWM %d: want 0 < RSS <= HWM", st.RSS, st.HWM)
	}
}
