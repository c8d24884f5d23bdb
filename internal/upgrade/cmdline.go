package upgrade

import "strings"

// configFlag finds the value of --config in a service's arguments.
func configFlag(args []string) (string, bool) { return ArgValue(args, "--config") }

// ArgValue is the value of the flag name ("--config") in a command line's
// arguments, given as "--config x" or "--config=x".
func ArgValue(args []string, name string) (string, bool) {
	for i, a := range args {
		switch {
		case a == name && i+1 < len(args):
			return args[i+1], true
		case strings.HasPrefix(a, name+"="):
			return strings.TrimPrefix(a, name+"="), true
		}
	}
	return "", false
}
