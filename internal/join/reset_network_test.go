package join

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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
	w.fs.AddFile(cniState, "{}")
	o := w.resetOptions()
	o.Network = &fakeNetwork{fs: w.fs}
	var out bytes.Buffer
	if err := Reset(context.Background(), strings.NewReader(""), &out, false, o, w.system()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	want := append(append([]string{}, resetStepNames[:7]...), "[8/9] remove the pod network", "[9/9] remove empty directories")
	for i := range want[:7] {
		want[i] = strings.Replace(want[i], "/8]", "/9]", 1)
	}
	if lines := stepLines(out.String()); !reflect.DeepEqual(lines, want) {
		t.Errorf("steps:\n%s", strings.Join(lines, "\n"))
	}
	mustContain(t, "output", out.String(), `removed HNS network "edgecore-l2bridge"`, `removed C:\etc\kubeedge`+"\n")
	if w.fs.Has(`C:\etc\kubeedge`) || !w.fs.Has(cniConf) {
		t.Errorf("after reset --network: %v", w.fs.Paths())
	}
}

// Without --network the pod network and its record stay, while
// C:\etc\kubeedge goes as usual.
func TestResetWithoutNetworkKeepsIt(t *testing.T) {
	w := joined(t)
	w.fs.AddFile(cniState, "{}")
	var out bytes.Buffer
	if err := Reset(context.Background(), strings.NewReader(""), &out, false, w.resetOptions(), w.system()); err != nil {
		t.Fatalf("%v\n%s", err, &out)
	}
	if !w.fs.Has(cniState) || strings.Contains(out.String(), "pod network") {
		t.Errorf("reset without --network touched the pod network:\n%s", &out)
	}
	if w.fs.Has(`C:\etc\kubeedge`) {
		t.Errorf("reset without --network kept C:\\etc\\kubeedge: %v", w.fs.Paths())
	}
}

func TestResetNetworkFailureNamesTheStep(t *testing.T) {
	w := joined(t)
	o := w.resetOptions()
	o.Network = &fakeNetwork{fs: w.fs, err: errors.New("the Host Networking Service (HNS) exists on Windows only")}
	err := Reset(context.Background(), strings.NewReader(""), &bytes.Buffer{}, false, o, w.system())
	var se *steps.StepError
	if !errors.As(err, &se) || se.Step != "remove the pod network" || !strings.Contains(se.Fix, "run reset --network again") {
		t.Errorf("err = %v", err)
	}
}
