# sync_up of Rex::Commands::Fastsum against stock Rex::Commands::Sync on
# the same trees, through a real sshd on 127.0.0.1: after every sync both
# remote trees equal the local one byte for byte and mode for mode, and
# on_change names the same files.
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use lib 't/lib';
use TestHost qw(write_file read_tree);

my $host = TestHost->start;
my $d    = File::Temp->newdir;
my $src  = "$d/src";

# Names stock Rex can carry (it breaks on a single quote, `$`, backticks
# and names that are not ASCII: see 11-names.t).
my %files = (
  'index.html'           => [ "<h1>hi</h1>\n", 0644 ],
  'bin/run'              => [ "#!/bin/sh\necho run\n", 0755 ],
  'secret/key'           => [ "k" x 100, 0600 ],
  'a b/with space.txt'   => [ "space\n", 0644 ],
  'deep/x/y/z/leaf.txt'  => [ "leaf\n", 0640 ],
  'empty'                => [ "", 0644 ],
);
$files{"dir$_/f$_.txt"} = [ "file $_\n" x $_, 0644 ] for 1 .. 10;
write_file( "$src/$_", @{ $files{$_} } ) for keys %files;
chmod 0750, "$src/bin";

sub sync_both {
  my (%o) = @_;
  my %seen;
  for my $which ( [ stock => 'use Rex::Commands::Sync' ], [ ours => 'use Rex::Commands::Fastsum' ] ) {
    my ( $name, $use ) = @$which;
    mkdir "$d/$name";
    my ( $status, $out ) = $host->run_rex(
      use  => $use,
      body => "sync_up '$src', '$d/$name', { $o{options} on_change => sub { print \"CHANGED \$_\\n\" for \@_ } };",
    );
    is( $status, 0, "$name: rex ran" ) or diag($out);
    $seen{$name} = [ sort map { s{^\Q$d/$name\E/}{}r } $out =~ m/^(?:\e\[0m)?CHANGED (.*)$/mg ];
  }
  return \%seen;
}

sub same_trees {
  my ($what) = @_;
  my $local = read_tree($src);
  is_deeply( read_tree("$d/ours"),  $local, "$what: our remote tree is the local one" );
  is_deeply( read_tree("$d/stock"), $local, "$what: stock's remote tree is the local one" );
}

my $seen = sync_both( options => '' );
same_trees('first sync');
is_deeply( $seen->{ours}, $seen->{stock}, 'first sync: on_change as stock' );
is_deeply( $seen->{ours}, [ sort keys %files ], 'first sync: every file changed' );
is( ( stat "$d/ours/bin" )[2] & 07777, ( stat "$d/stock/bin" )[2] & 07777, 'directory modes as stock' );

$seen = sync_both( options => '' );
is_deeply( $seen, { ours => [], stock => [] }, 'nothing changed: on_change not called' );

write_file( "$src/index.html", "<h1>changed</h1>\n" );
write_file( "$src/dir3/f3.txt", "same size!\n" );
write_file( "$src/new/dir/added.txt", "added\n" );
chmod 0600, "$src/dir1/f1.txt";    # a mode alone is not a change (stock's rule too)
$seen = sync_both( options => '' );
delete local $files{x};
my $local = read_tree($src);
$local->{'dir1/f1.txt'}[1] = '0644';
is_deeply( read_tree("$d/ours"), $local, 'after edits: our tree has the new bytes' );
is_deeply( read_tree("$d/ours"), read_tree("$d/stock"), 'after edits: as stock' );
is_deeply( $seen->{ours}, $seen->{stock}, 'after edits: on_change as stock' );
is_deeply( $seen->{ours}, [ 'dir3/f3.txt', 'index.html', 'new/dir/added.txt' ], 'exactly the edited files' );

# Excludes: stock's rule (a glob with / matches the path, else the name).
write_file( "$src/skip.tmp",       "tmp\n" );
write_file( "$src/dir2/keep.log",  "log\n" );
write_file( "$src/dir4/skip.log",  "log\n" );
write_file( "$src/dir5/real.txt",  "real\n" );
$seen = sync_both( options => "exclude => ['*.tmp', 'dir4/*.log']," );
ok( !-e "$d/ours/skip.tmp" && !-e "$d/ours/dir4/skip.log", 'excluded files not sent' );
is_deeply( [ sort keys %{ read_tree("$d/ours") } ], [ sort keys %{ read_tree("$d/stock") } ],
  'excludes: the same files as stock' );
# Stock passes excluded files to on_change although it did not send them;
# ours names only what it wrote.
is_deeply( $seen->{ours}, [ grep { !m/skip/ } @{ $seen->{stock} } ], 'on_change: stock minus what was not sent' );
is_deeply( $seen->{ours}, [ 'dir2/keep.log', 'dir5/real.txt' ], 'on_change: what was sent' );

# Owners and modes from the options.
write_file( "$src/opts/one.txt", "one\n" );
# The running user's own names: chown to them works as root and as anyone.
my $me    = getpwuid($<);
my $group = getgrgid( ( split ' ', $( )[0] );
$seen = sync_both( options => "files => { mode => 600, owner => '$me', group => '$group' }, directories => { mode => 700 }," );
for my $name (qw(ours stock)) {
  is( sprintf( '%04o', ( stat "$d/$name/opts/one.txt" )[2] & 07777 ), '0600', "$name: files mode" );
  is( sprintf( '%04o', ( stat "$d/$name/opts" )[2] & 07777 ),        '0700', "$name: directories mode" );
}

# sync_down: the remote tree (ours, as synced above) down into two empty
# local directories, stock's and ours, with an exclude (stock's rule there:
# the name only).
my %down;
for my $which ( [ stock => 'use Rex::Commands::Sync' ], [ ours => 'use Rex::Commands::Fastsum' ] ) {
  my ( $name, $use ) = @$which;
  mkdir "$d/down-$name";
  my ( $status, $out ) = $host->run_rex(
    use  => $use,
    body => "sync_down '$d/ours', '$d/down-$name', { exclude => ['*.log'], on_change => sub { print \"CHANGED \$_\\n\" for \@_ } };",
  );
  is( $status, 0, "sync_down, $name: rex ran" ) or diag($out);
  $down{$name} = [ sort map { s{^\Q$d/down-$name\E/}{}r } $out =~ m/^(?:\e\[0m)?CHANGED (.*)$/mg ];
}
is_deeply( read_tree("$d/down-ours"), read_tree("$d/down-stock"), 'sync_down: the same tree and modes as stock' );
ok( !grep( {m/\.log$/} keys %{ read_tree("$d/down-ours") } ), 'sync_down: excluded names not fetched' );
# Stock names excluded files in on_change here too; ours only what it wrote.
is_deeply( $down{ours}, [ grep { !m/\.log$/ } @{ $down{stock} } ], 'sync_down: on_change as stock, less what was not fetched' );
is_deeply( $down{ours}, [ sort keys %{ read_tree("$d/down-ours") } ], 'sync_down: on_change names every file written' );

done_testing;
