package service

import "fmt"

// servicesKey is where the service manager keeps each service's
// configuration, under HKEY_LOCAL_MACHINE: a service's key is
// servicesKey + name.
const servicesKey = `SYSTEM\CurrentControlSet\Services\`

// configurer changes an installed service's stored configuration. The
// order of the calls is decided by setCommandLine, over this interface,
// so that it is tested everywhere.
type configurer interface {
	// setImagePath replaces the command line (ChangeServiceConfig).
	setImagePath(line string) error
	// flush writes the service's registry key to disk (RegFlushKey).
	flush() error
}

// setCommandLine replaces the service's command line and returns once the
// change is on disk. ChangeServiceConfig writes the service's registry
// key, and the registry writes its hives to disk lazily, seconds later:
// an upgrade that points the service at another binary and then renames
// the binary away (each rename written through) could, after a power cut
// in between, boot with the rename done and the service still naming the
// binary that is gone. So the key is flushed before the caller moves on.
func setCommandLine(name, line string, c configurer) error {
	if err := c.setImagePath(line); err != nil {
		return explain(OpConfigure, name, err)
	}
	if err := c.flush(); err != nil {
		return fmt.Errorf("%s service %q: the new command line %s was set but not flushed to disk (flush HKLM\\%s%s: %w): a power cut now could bring the old one back; run the command again",
			OpConfigure, name, line, servicesKey, name, err)
	}
	return nil
}
