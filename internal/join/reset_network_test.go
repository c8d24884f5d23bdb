package join_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/kubeedge-windows/edgecore/internal/hosttest"
	"github.com/kubeedge-windows/edgecore/internal/join"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/kubeedge-windows/edgecore/internal/hostfs/hostfstest"
	"github.com/kubeedge-windows/edgecore/internal/steps"
)

const cniState = `C:\Program Files\containerd\edgecore-cni-config.json`

// fakeNetwork stands in for podnet.Remover: it removes cni-config's record
// from the fake file system, as the real one does after the HNS objects.
type fakeNetwork struct {
	fs  *hostfstest.FS
	err error
}

func (n *fakeNetwork) Describe() string { return "remove the HNS network cni-config created" }

func (n *fakeNetwork) Remove(_ context.Context, out io.Writer) error {
	if n.err != nil {
		return n.err
	}
	fmt.Fprintln(out, "removed HNS network \"edgecore-l2bridge\"")
	return n.fs.Remove(cniState)
}

// reset --network removes the pod network and its record (in containerd's
// directory, which stays) as well as everything plain reset removes.
func TestResetNetwork(t *testing.T) {
	w := joined(t)
	w.FS.AddFile(cniState, "{}")
	o := resetOptions(w)
	o.Network = &fakeNetwork{fs: w.FS}
	var out bytes.Buffer
	if err := join.Reset(context.Background(), strings.NewReader(""), &out, false, o, w.System()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	want := append(append([]string{}, resetStepNames[:7]...), "[8/9] remove the pod network", "[9/9] remove empty directories")
	for i := range want[:7] {
		want[i] = strings.Replace(want[i], "/8]", "/9]", 1)
	}
	if lines := hosttest.StepLines(out.String()); !reflect.DeepEqual(lines, want) {
		t.Errorf("steps:\n%s", strings.Join(lines, "\n"))
	}
	hosttest.MustContain(t, "output", out.String(), `removed HNS network "edgecore-l2bridge"`, `removed C:\etc\kubeedge`+"\n")
	if w.FS.Has(`C:\etc\kubeedge`) || !w.FS.Has(cniConf) {
		t.Errorf("after reset --network: %v", w.FS.Paths())
	}
}

// Without --network the pod network and its record stay, while
// C:\etc\kubeedge goes as usual.
func TestResetWithoutNetworkKeepsIt(t *testing.T) {
	w := joined(t)
	w.FS.AddFile(cniState, "{}")
	var out bytes.Buffer
	if err := join.Reset(context.Background(), strings.NewReader(""), &out, false, resetOptions(w), w.System()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if !w.FS.Has(cniState) || strings.Contains(out.String(), "pod network") {
		t.Errorf("reset without --network touched the pod network:\n%s", &out)
	}
	if w.FS.Has(`C:\etc\kubeedge`) {
		t.Errorf("reset without --network kept C:\\etc\\kubeedge: %v", w.FS.Paths())
	}
}

func TestResetNetworkFailureNamesTheStep(t *testing.T) {
	w := joined(t)
	o := resetOptions(w)
	o.Network = &fakeNetwork{fs: w.FS, err: errors.New("the Host Networking Service (HNS) exists on Windows only")}
	err := join.Reset(context.Background(), strings.NewReader(""), &bytes.Buffer{}, false, o, w.System())
	var se *steps.StepError
	if !errors.As(err, &se) || se.Step != "remove the pod network" || !strings.Contains(se.Fix, "run reset --network again") {
		t.Errorf("err = %v", err)
	}
}
