# Rex's sudo applies: the listing, the unpacking and md5 run through the
# host's sudo (a sudo on the host's PATH that logs each call, then runs the
# real one), with owners set as the options say.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use lib 't/lib';
use TestHost qw(write_file read_tree);

chomp( my $sudo = `sh -c 'command -v sudo'` );
plan skip_all => 'no sudo (scripts/tests/install-peers installs it)' if !$sudo;
# Rex's sudo must not wait for a password: root, or sudo without one.
plan skip_all => 'sudo asks for a password here' if system("'$sudo' -n true 2>/dev/null") != 0;
my $d    = File::Temp->newdir;
# The login shell's PATH starts with the logging sudo (Rex calls `sudo`
# by the host's PATH, before its own `path` applies).
my $host = TestHost->start( extra => "SetEnv PATH=$d/bin:/usr/sbin:/usr/bin:/sbin:/bin" );
write_file( "$d/src/dir$_/f.txt", "f $_\n" ) for 1 .. 5;
write_file( "$d/src/quote's.txt", "q\n" );
mkdir "$d/dst";
write_file( "$d/bin/sudo", qq{#!/bin/sh\necho call >> '$d/sudo.log'\nexec '$sudo' "\$@"\n}, 0755 );
my ( $status, $out ) = $host->run_rex(
  use  => "use Rex::Commands::Fastsum;\nsudo TRUE;",
  path => [ "$d/bin", '/usr/sbin', '/usr/bin', '/sbin', '/bin' ],
  body => "sync_up '$d/src', '$d/dst', { files => { owner => 'root', group => 'root' } };"
    . " print \"SUM \", md5('$d/src/quote\\'s.txt'), \"\\n\";",
);
is( $status, 0, 'rex ran with sudo' ) or diag($out);
is_deeply( read_tree("$d/dst"), read_tree("$d/src"), 'the host has the tree' );
use Digest::MD5 ();
like( $out, qr/SUM \Q@{[ Digest::MD5::md5_hex("q\n") ]}\E$/m, 'md5 through sudo' );
open( my $log, '<', "$d/sudo.log" ) or die("no call went through sudo: $!");
my @calls = <$log>;
cmp_ok( scalar @calls, '>=', 3, 'listing, sending and md5 went through sudo' );
done_testing;
