// Package configfile writes the node's configuration file without joining
// (`edgecore.exe config`): keadm's join flags, the project's configuration
// rules, and the file's ACL from its first byte, as join writes it.
package configfile
