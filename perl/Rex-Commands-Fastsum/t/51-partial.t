# Issue 51, 15: a sync that fails part way dies naming what failed, and
# every file it did put in place is finished (bytes, mode, on_change), so
# that nothing is lost between runs: a file is either reported by
# on_change in the run that wrote it, or still different for the next
# run's listing. Nothing half-written is ever in place.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use lib 't/lib';
use TestHost qw(write_file read_tree);

my $host = TestHost->start;
my $d    = File::Temp->newdir;

my $no_tar = "$d/no-tar-bin";
mkdir $no_tar;
for my $tool (qw(sh perl find xargs od mktemp rm mv chmod chown chgrp mkdir dd sort tr cat grep wc uname head env sleep kill)) {
  chomp( my $real = `sh -c 'command -v $tool'` );
  symlink( $real, "$no_tar/$tool" ) or die("$tool: $!") if $real;
}

sub run {
  my ( $src, $dst, $path, $options ) = @_;
  my ( $status, $out ) = $host->run_rex(
    use  => 'use Rex::Commands::Fastsum',
    path => $path,
    body => "sync_up '$src', '$dst', { $options on_change => sub { print \"CHANGED \$_\\n\" for \@_ } };",
  );
  return ( $status, $out, [ sort map { s{^\Q$dst\E/}{}r } $out =~ m/^(?:\e\[0m)?CHANGED (.*)$/mg ] );
}

sub mode { sprintf( '%04o', ( stat $_[0] )[2] & 07777 ) }

for my $case ( [ 'tar' => [ '/usr/bin', '/bin' ] ], [ 'no tar' => [$no_tar] ] ) {
  my ( $how, $path ) = @$case;
  my $w = File::Temp->newdir( DIR => $d );
  my ( $src, $dst ) = ( "$w/src", "$w/dst" );
  # The host has a directory where the local tree has a file: that file
  # cannot go; the ones before and after it in the plan can.
  write_file( "$src/a.txt",       "a\n", 0640 );
  write_file( "$src/b/clash",     "local clash\n", 0644 );
  write_file( "$src/b/c.txt",     "c\n", 0600 );
  write_file( "$src/z/-z y.txt",  "z\n", 0751 );
  write_file( "$dst/b/clash/keep", "the host's\n", 0644 );
  write_file( "$dst/b/c.txt",     "old c\n", 0644 );

  my ( $status, $out, $changed ) = run( $src, $dst, $path, '' );
  isnt( $status, 0, "$how: the run fails" );
  like( $out, qr/b\/clash: the host has a directory there/, "$how: naming the file that failed, and why" ) or diag($out);
  is_deeply( $changed, [ 'a.txt', 'b/c.txt', 'z/-z y.txt' ], "$how: on_change names the files put in place" );
  is( mode("$dst/a.txt"),        '0640', "$how: with their modes" );
  is( mode("$dst/b/c.txt"),      '0600', "$how: with their modes, over an old file" );
  is( mode("$dst/z/-z y.txt"),   '0751', "$how: with their modes, in a new directory" );
  is( read_tree($dst)->{'b/c.txt'}[0], "c\n", "$how: with their bytes" );
  is( read_tree($dst)->{'b/clash/keep'}[0], "the host's\n", "$how: the directory in the way is left alone" );
  ok( !grep( {m{/\.fastsum-rex\.}} keys %{ read_tree($dst) } ), "$how: no temporary file left" );

  ( $status, $out, $changed ) = run( $src, $dst, $path, '' );
  isnt( $status, 0, "$how: the next run fails again" );
  like( $out, qr/b\/clash: the host has a directory there/, "$how: on the same file" );
  is_deeply( $changed, [], "$how: and has nothing else to send" );

  # A file that cannot be finished (its owner cannot be set) is not put in
  # place: the next run still sees it as different.
  write_file( "$src/a.txt", "a, edited\n", 0640 );
  ( $status, $out, $changed ) = run( $src, $dst, $path, "files => { owner => 'no-such-user-fastsum' }," );
  isnt( $status, 0, "$how: a file whose owner cannot be set fails the run" );
  like( $out, qr/a\.txt: it could not be put in place/, "$how: naming it" ) or diag($out);
  is_deeply( $changed, [], "$how: nothing was put in place" );
  is( read_tree($dst)->{'a.txt'}[0], "a\n", "$how: the old bytes are still there" );
  is( mode("$dst/a.txt"), '0640', "$how: with the old mode" );
  ok( !grep( {m{/\.fastsum-rex\.}} keys %{ read_tree($dst) } ), "$how: no temporary file left" );
  rmdir "$dst/b/clash/keep";
  unlink "$dst/b/clash/keep";
  rmdir "$dst/b/clash";
  ( $status, $out, $changed ) = run( $src, $dst, $path, '' );
  is( $status, 0, "$how: once the way is clear the run passes" ) or diag($out);
  is_deeply( $changed, [ 'a.txt', 'b/clash' ], "$how: and sends what was left" );
  is_deeply( read_tree($dst), read_tree($src), "$how: the host has the tree" );
}

# A tar that fails after it unpacked everything: nothing is in place yet
# (it unpacks into a private directory), the task dies naming the files,
# and the next run sends them all and names them to on_change.
my $bad_tar = "$d/bad-tar-bin";
mkdir $bad_tar;
chomp( my $real_tar = `sh -c 'command -v tar'` );
write_file( "$bad_tar/tar", qq{#!/bin/sh\n'$real_tar' "\$@"\necho "tar: simulated failure" >&2\nexit 2\n}, 0755 );
my $w = File::Temp->newdir( DIR => $d );
write_file( "$w/src/one",       "one\n", 0640 );
write_file( "$w/src/two/-two",  "two\n", 0600 );
mkdir "$w/dst";
my ( $status, $out, $changed ) = run( "$w/src", "$w/dst", [ $bad_tar, '/usr/bin', '/bin' ], '' );
isnt( $status, 0, 'tar fails: the task fails' );
like( $out, qr/not put in place: (?=.*\bone\b)(?=.*two\/-two).*simulated failure/, 'naming the files and what tar said' ) or diag($out);
is_deeply( $changed, [], 'nothing was put in place' );
( $status, $out, $changed ) = run( "$w/src", "$w/dst", [ '/usr/bin', '/bin' ], '' );
is( $status, 0, 'the next run passes' ) or diag($out);
is_deeply( $changed, [ 'one', 'two/-two' ], 'and sends them' );
is_deeply( read_tree("$w/dst"), read_tree("$w/src"), 'with their modes' );

done_testing;
