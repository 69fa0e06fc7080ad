# An incomplete answer sends nothing: a missing remote directory, a
# listing that failed part way, a connection cut mid-listing.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use lib 't/lib';
use TestHost qw(write_file read_tree);

my $host = TestHost->start;
my $d    = File::Temp->newdir;
write_file( "$d/src/dir$_/f.txt", "new $_\n" ) for 1 .. 30;

my ( $status, $out ) = $host->run_rex(
  use  => 'use Rex::Commands::Fastsum',
  body => "sync_up '$d/src', '$d/missing';",
);
isnt( $status, 0, 'a missing remote directory fails the task' );
like( $out, qr/\Q$d\E\/missing : no such directory\./, "with stock Rex's message" );
ok( !-e "$d/missing", 'and nothing was made' );

# Hosts whose find breaks: one that fails after part of the listing, one
# that kills the whole command group (the connection's answer stops).
my %find = (
  'find fails part way' => qq{#!/bin/sh\n/usr/bin/find "\$@" | head -c 60\nexit 1\n},
  'connection cut'      => qq{#!/bin/sh\n/usr/bin/find "\$@" | head -c 60\nkill -9 0\n},
);
for my $what ( sort keys %find ) {
  my $bin = File::Temp->newdir( DIR => $d );
  write_file( "$bin/find", $find{$what}, 0755 );
  my $dst = File::Temp->newdir( DIR => $d );
  write_file( "$dst/dir$_/f.txt", "old $_\n" ) for 1 .. 30;
  my $before = read_tree("$dst");
  ( $status, $out ) = $host->run_rex(
    use  => 'use Rex::Commands::Fastsum',
    path => [ "$bin", '/usr/bin', '/bin' ],
    body => "sync_up '$d/src', '$dst', { on_change => sub { print \"CHANGED \$_\\n\" for \@_ } };",
  );
  isnt( $status, 0, "$what: the task fails" );
  like( $out, qr/incomplete|ended before/, "$what: saying the listing is incomplete" ) or diag($out);
  unlike( $out, qr/CHANGED/, "$what: on_change not called" );
  is_deeply( read_tree("$dst"), $before, "$what: nothing was sent" );
}

done_testing;
