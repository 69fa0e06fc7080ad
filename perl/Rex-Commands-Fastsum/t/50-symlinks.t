# Issue 51, 15: sync_up never writes through a symlink on the host. A
# symlink in the target where the local tree has a directory or a file is
# replaced by a real directory or file, as rsync -r does (the link itself
# goes; what it pointed at is left alone). The property, with the host's
# tar and without it: after a sync the remote tree is the local one (lstat
# by lstat: no link left where the local tree has a file or directory,
# same bytes, same file modes), and nothing outside the target changed.
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

# Names as in 11-names.t: spaces, newlines, quotes, leading dashes.
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
  my ( $src, $dst, $out ) = ( "$w/src", "$w/dst", "$w/outside" );

  # Outside the target: what its links point at, with a mode to keep.
  write_file( "$out/dir/f",      "OUTSIDE f\n", 0640 );
  write_file( "$out/dir/-dash",  "OUTSIDE dash\n", 0600 );
  write_file( "$out/dir/deep/g", "OUTSIDE g\n" );
  write_file( "$out/file",       "OUTSIDE file\n", 0600 );
  write_file( "$out/dir/$_",     "OUTSIDE $_\n" ) for @odd;

  # The local tree.
  my @local = (
    'sub/f', 'sub/deep/g', 'file', 'rel/f', 'nested/real/link/deep/f', 'relink/x', 'inner/y',
    'dangling/x', 'dangfile', 'quote dir/q file', map( {"$_/f"} @odd ), map( {"flat $_"} @odd ), '-top', '--top',
  );
  write_file( "$src/$_", "local $_\n", 0644 ) for @local;
  chmod 0755, "$src/file";

  # The target: a link wherever the local tree has something, pointing
  # outside (absolute, relative, dangling), or inside the target itself.
  mkdir $dst;
  symlink( "$out/dir",       "$dst/sub" )         or die $!;
  symlink( "$out/file",      "$dst/file" )        or die $!;
  symlink( '../outside/dir', "$dst/rel" )         or die $!;
  mkdir "$dst/nested";
  mkdir "$dst/nested/real";
  symlink( "$out/dir",       "$dst/nested/real/link" ) or die $!;
  write_file( "$dst/inner/y", "local inner/y\n", 0644 );
  symlink( 'inner',          "$dst/relink" )      or die $!;
  symlink( "$out/nowhere",   "$dst/dangling" )    or die $!;
  symlink( "$out/newfile",   "$dst/dangfile" )    or die $!;
  mkdir "$dst/quote dir";
  symlink( "$out/file",      "$dst/quote dir/q file" ) or die $!;
  symlink( "$out/dir",       "$dst/$_" ) or die $! for @odd;
  symlink( "$out/dir/$_",    "$dst/flat $_" ) or die $! for @odd;
  symlink( "$out/file",      "$dst/-top" )        or die $!;
  symlink( "$out/dir/-dash", "$dst/--top" )       or die $!;

  my $outside = walk( $out, dir_modes => 1 );
  my $body = "sync_up '$src', '$dst', { on_change => sub { print \"CHANGED \", unpack( 'H*', \$_ ), \"\\n\" for \@_ } };";
  my ( $status, $log ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  is( $status, 0, "$how: rex ran" ) or diag($log);
  is_deeply( walk( $out, dir_modes => 1 ), $outside, "$how: nothing outside the target changed" );
  is_deeply( walk($dst), walk($src), "$how: the remote tree is the local one, no link left" );
  my @changed = sort map { pack( 'H*', $_ ) } $log =~ m/^(?:\e\[0m)?CHANGED ([0-9a-f]+)$/mg;
  is_deeply( \@changed, [ sort map {"$dst/$_"} grep { $_ ne 'inner/y' } @local ],
    "$how: on_change names every file put where a link was" );
  ok( !-e "$out/newfile" && !-e "$out/nowhere", "$how: nothing made behind a dangling link" );
  ok( !-e "$d/PWNED" && !-e "$host->{dir}/PWNED", "$how: no name ran as a command" );

  ( $status, $log ) = $host->run_rex( use => 'use Rex::Commands::Fastsum', path => $path, body => $body );
  is( $status, 0, "$how: rex ran again" ) or diag($log);
  unlike( $log, qr/CHANGED/, "$how: and found nothing to send" );
  is_deeply( walk( $out, dir_modes => 1 ), $outside, "$how: outside still unchanged" );
}

done_testing;
