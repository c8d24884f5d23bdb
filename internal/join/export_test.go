package join

import (
	"context"
	"io"

	"github.com/kubeedge/api/apis/componentconfig/edgecore/v1alpha2"
)

// What join's external tests (package join_test, which drive join through
// the fake host of internal/hosttest) read of join's inside.

const (
	NumJoinSteps = numJoinSteps
	StepValidate = stepValidate
	StepWait     = stepWait
)

var KlogMessage = klogMessage

// LogWatch is the watch of edgecore's log while join waits.
type LogWatch = logWatch

func (l *logWatch) Feed(data []byte) error { return l.feed(data) }
func (l *logWatch) Connected() bool        { return l.connected }
func (l *logWatch) LastConnectErr() string { return l.lastConnectErr }
func (l *logWatch) LastError() string      { return l.lastError }

// Opts are the options j runs with, completed.
func (j *Join) Opts() Options { return j.o }

// Config is the configuration j writes.
func (j *Join) Config() *v1alpha2.EdgeCoreConfig { return j.cfg }

// Validate is join's first step.
func (j *Join) Validate(ctx context.Context, out io.Writer) error { return j.validate(ctx, out) }
