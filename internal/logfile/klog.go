package logfile

import (
	"flag"
	"fmt"
	"io"

	"k8s.io/klog/v2"
)

// klogSettings are the klog flag values for a destination.
//
// logtostderr=false makes klog write to the writer SetOutput gave it;
// alsologtostderr copies every line to stderr as well; one_output writes
// each line once (klog otherwise writes an error line to the error, warning
// and info outputs, which SetOutput points at the same writer, so it would
// appear three times); stderrthreshold=FATAL keeps errors out of a
// console nobody watches.
func klogSettings(d Destination) ([][2]string, error) {
	switch d {
	case Console:
		return [][2]string{{"logtostderr", "true"}, {"alsologtostderr", "false"}}, nil
	case File:
		return [][2]string{{"logtostderr", "false"}, {"alsologtostderr", "false"}, {"one_output", "true"}, {"stderrthreshold", "FATAL"}}, nil
	case Both:
		return [][2]string{{"logtostderr", "false"}, {"alsologtostderr", "true"}, {"one_output", "true"}}, nil
	}
	return nil, fmt.Errorf("unknown log destination %v", d)
}

// SetupKlog points klog at d: Console leaves it on stderr; File writes
// every line once to w; Both writes it to w and to stderr. w is needed
// unless d is Console. Call it once, before the modules start logging.
func SetupKlog(d Destination, w io.Writer) error {
	settings, err := klogSettings(d)
	if err != nil {
		return err
	}
	if d.UsesFile() && w == nil {
		return fmt.Errorf("log destination %v needs a log file writer", d)
	}
	// klog keeps these settings in flags of its own; a private flag set
	// reaches them without adding klog's flags to edgecore's command line.
	fs := flag.NewFlagSet("klog", flag.ContinueOnError)
	klog.InitFlags(fs)
	for _, kv := range settings {
		if err := fs.Set(kv[0], kv[1]); err != nil {
			return fmt.Errorf("setting klog's %s to %s: %w", kv[0], kv[1], err)
		}
	}
	if d.UsesFile() {
		klog.SetOutput(w)
	}
	return nil
}
