package steps

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"testing"
)

// recorder builds steps that log what ran into a shared list.
type recorder struct{ ran []string }

func (r *recorder) step(name string, fail error, undo bool, undoErr error) Step {
	s := Step{
		Name:        name,
		Description: "does " + name,
		Do: func(_ context.Context, out io.Writer) error {
			r.ran = append(r.ran, "do "+name)
			fmt.Fprintf(out, "working on %s\nsecond line\n", name)
			return fail
		},
	}
	if undo {
		s.Undo = func(out io.Writer) error {
			r.ran = append(r.ran, "undo "+name)
			fmt.Fprintf(out, "took back %s\n", name)
			return undoErr
		}
	}
	return s
}

func TestPlanRunsStepsInOrderAndPrintsThem(t *testing.T) {
	r := &recorder{}
	p := Plan{Verb: "join", Steps: []Step{r.step("one", nil, true, nil), r.step("two", nil, false, nil)}}
	var out bytes.Buffer
	if err := p.Run(context.Background(), &out); err != nil {
		t.Fatal(err)
	}
	want := "[1/2] one\n      working on one\n      second line\n[2/2] two\n      working on two\n      second line\n"
	if out.String() != want {
		t.Errorf("output:\n%s\nwant:\n%s", out.String(), want)
	}
	if !reflect.DeepEqual(r.ran, []string{"do one", "do two"}) {
		t.Errorf("ran %v", r.ran)
	}
}

func TestPlanUndoesTheFailedStepAndThoseBeforeInReverse(t *testing.T) {
	r := &recorder{}
	boom := errors.New("disk full")
	p := Plan{Verb: "join", Steps: []Step{
		r.step("one", nil, true, nil),
		r.step("check", nil, false, nil), // nothing to undo
		r.step("three", nil, true, nil),
		r.step("four", WithFix(boom, "free some space"), true, nil),
		r.step("five", nil, true, nil),
	}}
	var out bytes.Buffer
	err := p.Run(context.Background(), &out)
	want := []string{"do one", "do check", "do three", "do four", "undo four", "undo three", "undo one"}
	if !reflect.DeepEqual(r.ran, want) {
		t.Errorf("ran %v, want %v", r.ran, want)
	}
	var se *StepError
	if !errors.As(err, &se) || !errors.Is(err, boom) {
		t.Fatalf("error %v", err)
	}
	if se.Index != 4 || se.Total != 5 || se.Step != "four" || se.Fix != "free some space" {
		t.Errorf("step error %+v", se)
	}
	wantErr := "join failed at step 4/5 (four): disk full\n  fix: free some space\n  rolled back: four, three, one"
	if err.Error() != wantErr {
		t.Errorf("error:\n%s\nwant:\n%s", err, wantErr)
	}
	for _, want := range []string{
		"[4/5] four\n      working on four\n      second line\n      failed: disk full\nRolling back:\n  undo [4/5] four\n      took back four\n  undo [3/5] three\n",
		"  undo [1/5] one\n      took back one\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output does not contain %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "[5/5]") || strings.Contains(out.String(), "undo [2/5]") {
		t.Errorf("ran a later step or undid a step without undo:\n%s", out.String())
	}
}

func TestPlanGoesOnWhenAnUndoFails(t *testing.T) {
	r := &recorder{}
	p := Plan{Verb: "join", Steps: []Step{
		r.step("one", nil, true, nil),
		r.step("two", nil, true, errors.New("file in use")),
		r.step("three", errors.New("refused"), false, nil),
	}}
	err := p.Run(context.Background(), io.Discard)
	if !reflect.DeepEqual(r.ran, []string{"do one", "do two", "do three", "undo two", "undo one"}) {
		t.Errorf("ran %v", r.ran)
	}
	want := "join failed at step 3/3 (three): refused\n  rolled back: one\n  not rolled back, clean up by hand: undo of step 2 (two): file in use"
	if err == nil || err.Error() != want {
		t.Errorf("error:\n%v\nwant:\n%s", err, want)
	}
}

func TestPlanStopsWhenCancelledBetweenSteps(t *testing.T) {
	r := &recorder{}
	ctx, cancel := context.WithCancel(context.Background())
	p := Plan{Verb: "reset", Steps: []Step{
		{Name: "one", Do: func(context.Context, io.Writer) error { r.ran = append(r.ran, "do one"); cancel(); return nil },
			Undo: func(io.Writer) error { r.ran = append(r.ran, "undo one"); return nil }},
		r.step("two", nil, true, nil),
	}}
	err := p.Run(ctx, io.Discard)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v", err)
	}
	// Step two never began, so only step one is undone.
	if !reflect.DeepEqual(r.ran, []string{"do one", "undo one"}) {
		t.Errorf("ran %v", r.ran)
	}
	if !strings.HasPrefix(err.Error(), "reset failed at step 2/2 (two): context canceled") {
		t.Errorf("error %v", err)
	}
}

func TestPlanPrintShowsEveryStepWithoutRunningIt(t *testing.T) {
	r := &recorder{}
	p := Plan{Steps: []Step{r.step("one", nil, true, nil), r.step("two", nil, true, nil)}}
	var out bytes.Buffer
	p.Print(&out)
	if want := "[1/2] one: does one\n[2/2] two: does two\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if len(r.ran) > 0 {
		t.Errorf("printing ran %v", r.ran)
	}
}

func TestPrefixWriterIndentsAcrossWrites(t *testing.T) {
	var out bytes.Buffer
	w := Prefixed(&out, "> ")
	for _, s := range []string{"a", "b\nc", "\n", "\nd\n"} {
		if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if want := "> ab\n> c\n> \n> d\n"; out.String() != want {
		t.Errorf("got %q, want %q", out.String(), want)
	}
}

func TestFixIsFoundThroughWrapping(t *testing.T) {
	err := fmt.Errorf("validate: %w", WithFix(errors.New("refused"), "pass --force"))
	if got := Fix(err); got != "pass --force" {
		t.Errorf("Fix = %q, want the attached fix", got)
	}
	if got := Fix(errors.New("plain")); got != "" {
		t.Errorf("Fix of an error without one = %q", got)
	}
	if WithFix(nil, "anything") != nil {
		t.Error("WithFix(nil) is not nil: a step that succeeded would fail")
	}
}
