package steps

import (
	"bytes"
	"errors"
	"testing"
)

// Plans mark a cut message, cni-config does not; both keep a one-line
// message as it is.
func TestFirstLine(t *testing.T) {
	multi := errors.New("not ready after 2m0s: the node certificate is missing\nedgehub: connection refused")
	for _, c := range []struct {
		err       error
		cut, want string
	}{
		{multi, Cut, "not ready after 2m0s: the node certificate is missing …"},
		{multi, "", "not ready after 2m0s: the node certificate is missing"},
		{errors.New("disk full"), Cut, "disk full"},
		{errors.New("disk full"), "", "disk full"},
		{errors.New("\nsecond"), Cut, " …"},
	} {
		if got := FirstLine(c.err, c.cut); got != c.want {
			t.Errorf("FirstLine(%q, %q) = %q, want %q", c.err, c.cut, got, c.want)
		}
	}
}

func TestIndentedAndTitleLineUp(t *testing.T) {
	var out bytes.Buffer
	Title(&out, 2, 10, "stop the service")
	w := Indented(&out)
	w.Write([]byte("stopped edgecore\nafter 3s"))
	w.Write([]byte("\n"))
	if want := "[2/10] stop the service\n      stopped edgecore\n      after 3s\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

// A writer that fails must not claim to have written: io.Copy and friends
// stop on the count as well as the error.
func TestPrefixWriterReportsFailure(t *testing.T) {
	n, err := Prefixed(failingWriter{}, "> ").Write([]byte("line\n"))
	if err == nil || n != 0 {
		t.Errorf("Write = %d, %v; want 0 and the error", n, err)
	}
}
