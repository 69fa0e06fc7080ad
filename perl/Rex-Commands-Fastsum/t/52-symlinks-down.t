# Issue 51, 15, the same class on the other side: sync_down never writes
# through a symlink in the local target. A symlink there where the host
# has a directory or a file is replaced by a real one (the link goes; what
# it pointed at is left alone), a hard link is replaced, not written into;
# a local directory where the host has a file fails that file alone, the
# others are put in place and named to on_change, and the task dies
# naming it. With the host's tar and without it (one SFTP get each).
use v5.12.5;
use warnings;
use Test::More;
use File::Temp ();
use Digest::MD5 ();
use lib 't/lib';
use TestHost qw(write_file);

my $host = TestHost->start;
my $d    = File::Temp->newdir;

# Every entry under $root, not following links: relative name => what it is.
sub walk {
  my ( $root, %o ) = @_;
  my %tree;
  my @dirs = ('');
  while ( defined( my $rel = shift @dirs ) ) {
    my $dir = length $rel ? "$root/$rel" : $root;
    opendir( my $dh, $dir ) or die("$dir: $!");
    for my $e ( sort grep { $_ ne '.' && $_ ne '..' } readdir($dh) ) {
      my $r = length $rel ? "$rel/$e" : $e;
      my $p = "$root/$r";
      my @st = lstat($p) or die("$p: $!");
      if ( -l _ ) { $tree{$r} = 'link to ' . readlink($p) }
      elsif ( -d _ ) { $tree{$r} = $o{dir_modes} ? sprintf( 'dir %04o', $st[2] & 07777 ) : 'dir'; push @dirs, $r }
      elsif ( -f _ ) {
        open( my $fh, '<:raw', $p ) or die("$p: $!");
        $tree{$r} = sprintf( 'file %04o %s', $st[2] & 07777, Digest::MD5->new->addfile($fh)->hexdigest );
      }
      else { $tree{$r} = 'other' }
    }
  }
  return \%tree;
}

my @odd = ( "sp ace", "new\nline", "quote's \"dq\"", "-dash", "--", '$(touch PWNED)' );

my $bin = "$d/no-tar-bin";
mkdir $bin;
for my $tool (qw(sh perl find xargs od mktemp rm mv chmod chown chgrp mkdir dd sort tr cat grep wc uname head env sleep kill)) {
  chomp( my $real = `sh -c 'command -v $tool'` );
  symlink( $real, "$bin/$tool" ) or die("$tool: $!") if $real;
}

for my $case ( [ 'tar' => [ '/usr/bin', '/bin' ] ], [ 'no tar' => [$bin] ] ) {
  my ( $how, $path ) = @$case;
  my $w = File::Temp->newdir( DIR => $d );
  my ( $src, $dst, $out ) = ( "$w/host", "$w/local", "$w/outside" );

  write_file( "$out/dir/f",      "OUTSIDE f\n", 0640 );
  write_file( "$out/dir/deep/g", "OUTSIDE g\n" );
  write_file( "$out/file",       "OUTSIDE file\n", 0600 );
  write_file( "$out/hard",       "OUTSIDE hard\n", 0600 );
  write_file( "$out/dir/$_",     "OUTSIDE $_\n" ) for @odd;

  # The host's tree.
  my @remote = (
    'sub/f', 'sub/deep/g', 'file', 'hard', 'rel/f', 'nested/real/link/deep/f', 'relink/x', 'inner/y',
    map( {"$_/f"} @odd ), map( {"flat $_"} @odd ), '-top',
  );
  write_file( "$src/$_", "host $_\n", 0644 ) for @remote;
  chmod 0750, "$src/file";

  # The local target: links wherever the host has something.
  mkdir $dst;
  symlink( "$out/dir",       "$dst/sub" )      or die $!;
  symlink( "$out/file",      "$dst/file" )     or die $!;
  link( "$out/hard",         "$dst/hard" )     or die $!;
  symlink( '../outside/dir', "$dst/rel" )      or die $!;
  mkdir "$dst/nested";
  mkdir "$dst/nested/real";
  symlink( "$out/dir",       "$dst/nested/real/link" ) or die $!;
  write_file( "$dst/inner/y", "host inner/y\n", 0644 );
  symlink( 'inner',          "$dst/relink" )   or die $!;
  symlink( "$out/dir",       "$dst/$_" )       or die $! for @odd;
  symlink( "$out/dir/$_",    "$dst/flat $_" )  or die $! for @odd;
  symlink( "$out/file",      "$dst/-top" )     or die $!;

  my $outside = walk( $out, dir_modes => 1 );
  my $body = "sync_down '$src', '$dst', { on_change => sub { print \"CHANGED \", unpack( 'H*', \$_ ), \"\\n\" for \@_ } };";
  my ( $status, $log ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  is( $status, 0, "$how: rex ran" ) or diag($log);
  is_deeply( walk( $out, dir_modes => 1 ), $outside, "$how: nothing outside the target changed" );
  is_deeply( walk($dst), walk($src), "$how: the local tree is the host's, no link left" );
  my @changed = sort map { pack( 'H*', $_ ) } $log =~ m/^(?:\e\[0m)?CHANGED ([0-9a-f]+)$/mg;
  is_deeply( \@changed, [ sort map {"$dst/$_"} grep { $_ ne 'inner/y' } @remote ],
    "$how: on_change names every file put where a link was" );

  # Dangling links (fastsum's local walk with -L stops at them: the local
  # side is not followed).
  write_file( "$src/$_", "host $_\n", 0644 ) for 'dangling/x', 'dangfile';
  symlink( "$out/nowhere", "$dst/dangling" ) or die $!;
  symlink( "$out/newfile", "$dst/dangfile" ) or die $!;
  ( $status, $log ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  is( $status, 0, "$how: rex ran with dangling links in the way" ) or diag($log);
  ok( !-e "$out/newfile" && !-e "$out/nowhere", "$how: nothing made behind a dangling link" );
  is_deeply( walk($dst), walk($src), "$how: the local tree is the host's" );

  ( $status, $log ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  is( $status, 0, "$how: rex ran again" ) or diag($log);
  unlike( $log, qr/CHANGED/, "$how: and found nothing to fetch" );

  # A local directory where the host has a file.
  write_file( "$src/a.txt", "a\n", 0640 );
  write_file( "$src/clash", "host clash\n" );
  write_file( "$src/z.txt", "z\n", 0604 );
  write_file( "$dst/clash/keep", "local\n" );
  ( $status, $log ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  isnt( $status, 0, "$how: a directory in the way fails the task" );
  like( $log, qr/clash: there is a directory there/, "$how: naming the file" ) or diag($log);
  @changed = sort map { pack( 'H*', $_ ) } $log =~ m/^(?:\e\[0m)?CHANGED ([0-9a-f]+)$/mg;
  is_deeply( \@changed, [ "$dst/a.txt", "$dst/z.txt" ], "$how: on_change names the others, put in place" );
  is( walk($dst)->{'z.txt'}, walk($src)->{'z.txt'}, "$how: with their bytes and mode" );
  ok( !grep( {m{\.fastsum-rex\.}} keys %{ walk($dst) } ), "$how: no temporary file left" );
  is_deeply( walk( $out, dir_modes => 1 ), $outside, "$how: outside still unchanged" );
}

done_testing;
